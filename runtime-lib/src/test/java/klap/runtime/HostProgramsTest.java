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
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Host tier of the runtime library: every host-only test program under {@code src/test/host}
 * (each {@code *.cu} file: no kernels, no CUDA API calls, so it runs without a GPU; e.g.
 * {@code pool_stress.cu} stresses the pool allocator of {@code klap/pool_state.cuh}, which is
 * {@code __host__ __device__}, with host threads) is compiled with
 * {@code nvcc -std=c++17 -O2 -lpthread} against the headers in {@code src/main/resources} into
 * {@code target/host-tests/}, and RUN: it must exit 0 and print {@code <name>: PASS} as its last
 * line. Its output is kept in {@code target/host-tests/<name>.log}.
 * Fails (does not skip) when nvcc is missing: nvcc is part of every build machine here.
 * Set the environment variable {@code NVCC} to use a specific nvcc.
 */
class HostProgramsTest {
  private static final Path HOST_TESTS = Paths.get("src", "test", "host");
  private static final Path HEADERS = Paths.get("src", "main", "resources");
  private static final Path OUT = Paths.get("target", "host-tests");
  private static final long COMPILE_TIMEOUT_S = 600;
  private static final long RUN_TIMEOUT_S = 300;

  private static String nvcc() {
    String env = System.getenv("NVCC");
    return env != null && !env.isBlank() ? env : "nvcc";
  }

  private static List<Path> programs() throws IOException {
    try (Stream<Path> s = Files.list(HOST_TESTS)) {
      return s.filter(p -> p.toString().endsWith(".cu") && Files.isRegularFile(p)).sorted().toList();
    }
  }

  /** Runs cmd with its output (stdout and stderr) to log; returns the exit status. */
  private static int run(List<String> cmd, Path log, long timeoutS, String what) throws IOException, InterruptedException {
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    } catch (IOException e) {
      if (cmd.get(0).equals(nvcc())) {
        fail("cannot run nvcc (" + nvcc() + "): " + e.getMessage() + " -- install the CUDA toolkit or set NVCC", e);
      }
      throw e;
    }
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      fail(what + " timed out after " + timeoutS + " s: " + String.join(" ", cmd) + "\n" + tail(log));
    }
    return p.exitValue();
  }

  private static String tail(Path log) throws IOException {
    if (!Files.exists(log)) return "";
    String s = Files.readString(log, StandardCharsets.UTF_8);
    return s.length() > 20000 ? "...\n" + s.substring(s.length() - 20000) : s;
  }

  private static void compileAndRun(Path src) throws IOException, InterruptedException {
    String name = src.getFileName().toString().replaceFirst("\\.cu$", "");
    Path exe = OUT.resolve(name).toAbsolutePath();
    Path compileLog = OUT.resolve(name + ".nvcc.log");
    List<String> compile = List.of(nvcc(), "-std=c++17", "-O2", "-lpthread", "-I", HEADERS.toString(),
        "-o", exe.toString(), src.toString());
    long t0 = System.nanoTime();
    int rc = run(compile, compileLog, COMPILE_TIMEOUT_S, "nvcc");
    long t1 = System.nanoTime();
    assertEquals(0, rc, "nvcc failed on " + src + ": " + String.join(" ", compile) + "\n" + tail(compileLog));
    Path log = OUT.resolve(name + ".log");
    rc = run(new ArrayList<>(List.of(exe.toString())), log, RUN_TIMEOUT_S, name);
    long t2 = System.nanoTime();
    String output = Files.readString(log, StandardCharsets.UTF_8);
    System.out.printf("host test %s: nvcc %d ms, run %d ms, exit %d%n", name, (t1 - t0) / 1_000_000,
        (t2 - t1) / 1_000_000, rc);
    assertEquals(0, rc, name + " exited with " + rc + " (output in " + log + "):\n" + tail(log));
    List<String> lines = output.lines().filter(l -> !l.isBlank()).toList();
    assertFalse(lines.isEmpty(), name + " printed nothing");
    assertEquals(name + ": PASS", lines.get(lines.size() - 1).strip(),
        name + " did not end with '" + name + ": PASS' (output in " + log + "):\n" + tail(log));
    assertTrue(lines.stream().noneMatch(l -> l.startsWith("FAIL")), name + " printed FAIL lines:\n" + tail(log));
  }

  @TestFactory
  Stream<DynamicTest> everyHostTestProgramPasses() throws IOException {
    Files.createDirectories(OUT);
    List<Path> programs = programs();
    assertFalse(programs.isEmpty(), "no .cu host test programs under " + HOST_TESTS);
    return programs.stream().map(src -> DynamicTest.dynamicTest(src.getFileName().toString(), () -> compileAndRun(src)));
  }
}
