package klap.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Compile tier of the runtime library: every self-checking CUDA test program under
 * {@code src/test/cuda} -- each {@code *.cu} file, and each sub-directory whose {@code *.cu} files
 * are compiled and linked together (e.g. {@code multi_tu/}: several translation units with -rdc) --
 * must compile with {@code nvcc -std=c++17 -rdc=true -arch=sm_90}
 * against the headers in {@code src/main/resources} (output binaries go to
 * {@code target/cuda-tests/}; {@code scripts/gpu-session} builds and runs them on a GPU, each prints
 * PASS or FAIL). A program is built only when {@link #RECORD} lacks its line: the {@link
 * NvccBuildRecord#key} of its sources, every header under {@code src/main/resources} and {@code
 * src/test/cuda}, the flags and the nvcc release. After a build the test prints the line to add
 * there; a changed header or program therefore builds every program it may reach again, and an
 * unchanged one is not rebuilt on every CI run (26 builds, about 2.5 minutes of the 2-core CI
 * machine). klap's output, which includes the same headers, is built by the cli, regress and fuzz
 * compile tiers in any case. Fails (does not skip) when nvcc is missing: nvcc is part of every
 * build machine here. Set the environment variable {@code NVCC} to use a specific nvcc.
 */
class RuntimeLibCompileTest {
  private static final Path CUDA_TESTS = Paths.get("src", "test", "cuda");
  private static final Path HEADERS = Paths.get("src", "main", "resources");
  private static final Path OUT = Paths.get("target", "cuda-tests");
  /** The record of test programs built as they are now ({@link NvccBuildRecord}): program name, tab, key. */
  static final Path RECORD = Paths.get("src", "test", "resources", "known-builds.tsv");
  private static final List<String> FLAGS = List.of("-std=c++17", "-rdc=true", "-arch=sm_90");

  /** One test program: its name (the output binary) and its source files. */
  private record Program(String name, List<Path> sources) {}

  private record Result(Program program, int exit, String output, long millis) {}

  private static String nvcc() {
    String env = System.getenv("NVCC");
    return env != null && !env.isBlank() ? env : "nvcc";
  }

  private static List<Path> cuFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".cu") && Files.isRegularFile(p)).sorted().toList();
    }
  }

  /** @return every header a test program may include: the runtime's and the test programs' own (*.cuh) */
  private static List<Path> headers() throws IOException {
    List<Path> headers = new ArrayList<>();
    for (Path dir : List.of(HEADERS, CUDA_TESTS)) {
      try (Stream<Path> s = Files.walk(dir)) {
        s.filter(p -> Files.isRegularFile(p) && (dir.equals(HEADERS) || p.toString().matches(".*\\.(cuh|h|hpp)"))).forEach(headers::add);
      }
    }
    return headers;
  }

  private static List<Program> programs() throws IOException {
    List<Program> programs = new ArrayList<>();
    for (Path src : cuFiles(CUDA_TESTS)) {
      programs.add(new Program(src.getFileName().toString().replaceFirst("\\.cu$", ""), List.of(src)));
    }
    List<Path> dirs;
    try (Stream<Path> s = Files.list(CUDA_TESTS)) {
      dirs = s.filter(Files::isDirectory).sorted().toList();
    }
    for (Path dir : dirs) {
      List<Path> srcs = cuFiles(dir);
      if (!srcs.isEmpty()) programs.add(new Program(dir.getFileName().toString(), srcs));
    }
    return programs;
  }

  private static Result compile(Program prog) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(nvcc()));
    cmd.addAll(FLAGS);
    cmd.addAll(List.of("-I", HEADERS.toString(), "-o", OUT.resolve(prog.name()).toString()));
    for (Path src : prog.sources()) cmd.add(src.toString());
    long t0 = System.nanoTime();
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      fail("cannot run nvcc (" + nvcc() + "): " + e.getMessage()
          + " -- install the CUDA toolkit or set NVCC", e);
      throw e;
    }
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      fail("nvcc timed out on " + prog.sources());
    }
    return new Result(prog, p.exitValue(), String.join(" ", cmd) + "\n" + output,
        (System.nanoTime() - t0) / 1_000_000);
  }

  @Test
  void everyCudaTestProgramCompiles() throws Exception {
    Files.createDirectories(OUT);
    List<Program> all = programs();
    assertFalse(all.isEmpty(), "no .cu test programs under " + CUDA_TESTS);
    NvccBuildRecord record = NvccBuildRecord.load(RECORD);
    List<Path> headers = headers();
    List<Program> programs = new ArrayList<>();
    java.util.Map<String, String> lines = new java.util.HashMap<>();
    for (Program prog : all) {
      List<Path> read = new ArrayList<>(prog.sources());
      read.addAll(headers);
      String line = prog.name() + "\t" + NvccBuildRecord.key(String.join(" ", FLAGS), Paths.get(""), read);
      if (record.contains(line)) {
        System.out.printf("nvcc %s: built before as it is now (%s)%n", prog.name(), RECORD);
      } else {
        programs.add(prog);
        lines.put(prog.name(), line);
      }
    }
    if (programs.isEmpty()) {
      return;
    }
    int threads = Math.max(2, Math.min(programs.size(), Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Result>> futures = new ArrayList<>();
      for (Program prog : programs) futures.add(pool.submit(() -> compile(prog)));
      StringBuilder failures = new StringBuilder();
      for (Future<Result> f : futures) {
        Result r = f.get();
        System.out.printf("nvcc %s: exit %d in %d ms%n", r.program().name(), r.exit(), r.millis());
        if (r.exit() == 0) {
          System.out.printf("[known-builds] built; to build it only when it changes, add to %s: %s%n", RECORD,
              lines.get(r.program().name()));
        } else {
          failures.append("\n--- ").append(r.program().sources()).append(": nvcc exit ").append(r.exit())
              .append('\n').append(r.output());
        }
      }
      assertTrue(failures.length() == 0, "nvcc failed:" + failures);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * klap's device code that takes the generated launchers or record types (agg_site::flush, the
   * kernel-granularity record, finish and as-written paths) is never a weak function: ptxas compiles
   * a weak function on its own, without the register limit of the kernel that calls it, so a parent
   * klap bounds to 64 registers ({@code __launch_bounds__(1024)}) failed to build where nvcc left
   * such a function out of line ("Entry function ... with max regcount of 64 calls function
   * ...flush... with regcount of 68": random program 68000025, 2026-11-29). {@code src/test/ptx/linkage.cu}
   * is compiled to PTX with {@code -G}, which inlines nothing but {@code __forceinline__}, so every
   * such function is out of line; none of klap's ({@code _ZN4klap...}) instantiated with a lambda
   * ({@code Ul}) or the test's record type ({@code LinkArgs}) may be {@code .weak}.
   */
  @Test
  void outOfLineRuntimeCodeHasInternalLinkage() throws Exception {
    Files.createDirectories(OUT);
    Path ptx = OUT.resolve("linkage.ptx");
    List<String> cmd = List.of(nvcc(), "-std=c++17", "-rdc=true", "-arch=sm_90", "-G", "-ptx", "-I", HEADERS.toString(),
        "-o", ptx.toString(), Paths.get("src", "test", "ptx", "linkage.cu").toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.MINUTES), "nvcc timed out");
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + "\n" + output);
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("^\\.weak \\.func\\s+(?:\\([^)]*\\)\\s*)?(_Z[A-Za-z0-9_]+)", java.util.regex.Pattern.MULTILINE)
        .matcher(Files.readString(ptx));
    List<String> weak = new ArrayList<>();
    int functions = 0;
    while (m.find()) {
      functions++;
      String name = m.group(1);
      if (name.startsWith("_ZN4klap") && (name.contains("Ul") || name.contains("LinkArgs"))) weak.add(name);
    }
    assertTrue(functions > 0, "no weak function at all in " + ptx + ": the -G build did not keep functions out of line");
    assertTrue(weak.isEmpty(), "weak klap functions (compiled without the caller's register limit): " + weak);
  }

  @Test
  void headerIndexMatchesTheResourceDirectory() throws IOException {
    List<String> onDisk;
    try (Stream<Path> s = Files.list(HEADERS.resolve("klap"))) {
      onDisk = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cuh")).sorted().toList();
    }
    assertEquals(onDisk, RuntimeHeaders.names().stream().sorted().toList(),
        "klap/HEADERS must list exactly the .cuh files under src/main/resources/klap");
    assertTrue(RuntimeHeaders.names().contains("klap.cuh"));
  }

  @Test
  void writeToWritesEveryHeader() throws IOException {
    Path dir = Files.createTempDirectory("klap-headers");
    Files.createDirectories(dir.resolve("klap"));
    // an older klap header (its first line) must be overwritten
    Files.writeString(dir.resolve("klap").resolve("klap.cuh"), "// klap/klap.cuh -- stale");
    RuntimeHeaders.writeTo(dir);
    for (String name : RuntimeHeaders.names()) {
      Path written = dir.resolve("klap").resolve(name);
      assertTrue(Files.isRegularFile(written), "missing " + written);
      assertEquals(Files.readString(HEADERS.resolve("klap").resolve(name)), Files.readString(written), name);
    }
  }

  /**
   * A file named like a header that klap did not write (its first line is not klap's) is never
   * replaced, nor a link in its place: writeTo throws and writes nothing (review 2026-12-01: a
   * user's own klap/promote.cuh next to the output was overwritten).
   */
  @Test
  void writeToNeverReplacesAUsersOwnFile() throws IOException {
    Path dir = Files.createTempDirectory("klap-headers");
    Path mine = Files.createDirectories(dir.resolve("klap")).resolve("promote.cuh");
    Files.writeString(mine, "// my own promote.cuh\n");
    java.io.UncheckedIOException e = org.junit.jupiter.api.Assertions.assertThrows(java.io.UncheckedIOException.class,
        () -> RuntimeHeaders.writeTo(dir));
    assertTrue(e.getMessage().contains("promote.cuh exists and was not written by klap"), e.getMessage());
    assertEquals(mine, RuntimeHeaders.foreign(dir));
    assertEquals("// my own promote.cuh\n", Files.readString(mine));
    try (Stream<Path> s = Files.list(dir.resolve("klap"))) {
      assertEquals(List.of("promote.cuh"), s.map(p -> p.getFileName().toString()).toList(), "nothing is written");
    }
    // a link to klap's own header is left alone; a link to anything else is not replaced either
    Files.delete(mine);
    Path elsewhere = Files.createTempDirectory("klap-headers-shared");
    RuntimeHeaders.writeTo(elsewhere);
    Files.createSymbolicLink(mine, elsewhere.resolve("klap").resolve("promote.cuh"));
    RuntimeHeaders.writeTo(dir);
    assertTrue(Files.isSymbolicLink(mine));
    Files.delete(mine);
    Files.createSymbolicLink(mine, elsewhere.resolve("klap").resolve("pool.cuh"));
    assertEquals(mine, RuntimeHeaders.foreign(dir));
  }

  /**
   * Parallel builds write the headers into one directory while nvcc reads them: a header with the
   * right content is left alone (same file, same modification time), a stale one is replaced by a
   * move (no partial file is ever visible), no temporary file stays, and the headers are readable
   * by every user. Eight writers at once end with every header complete.
   */
  @Test
  void writeToLeavesCurrentHeadersAloneAndReplacesOthersWhole() throws Exception {
    Path dir = Files.createTempDirectory("klap-headers");
    RuntimeHeaders.writeTo(dir);
    Path klap = dir.resolve("klap");
    Path pool = klap.resolve("pool.cuh");
    Path state = klap.resolve("pool_state.cuh");
    java.nio.file.attribute.FileTime old = java.nio.file.attribute.FileTime.fromMillis(1_000_000L);
    Files.setLastModifiedTime(pool, old);
    Object key = Files.readAttributes(pool, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    Files.writeString(state, "// klap/pool_state.cuh -- an older one\n#error stale");
    java.util.concurrent.ExecutorService ex = java.util.concurrent.Executors.newFixedThreadPool(8);
    List<java.util.concurrent.Future<?>> fs = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      fs.add(ex.submit(() -> RuntimeHeaders.writeTo(dir)));
    }
    for (java.util.concurrent.Future<?> f : fs) {
      f.get();
    }
    ex.shutdown();
    assertEquals(old, Files.getLastModifiedTime(pool), "an up-to-date header is not rewritten");
    assertEquals(key, Files.readAttributes(pool, java.nio.file.attribute.BasicFileAttributes.class).fileKey());
    assertEquals(Files.readString(HEADERS.resolve("klap").resolve("pool_state.cuh")), Files.readString(state));
    try (Stream<Path> s = Files.list(klap)) {
      assertEquals(RuntimeHeaders.names().stream().sorted().toList(),
          s.map(p -> p.getFileName().toString()).sorted().toList(), "no temporary file is left");
    }
    if (Files.getFileAttributeView(state, java.nio.file.attribute.PosixFileAttributeView.class) != null) {
      assertTrue(Files.getPosixFilePermissions(state).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ));
    }
  }
}
