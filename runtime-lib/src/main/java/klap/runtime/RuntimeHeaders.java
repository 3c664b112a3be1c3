package klap.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The klap device runtime library: the header-only files {@code klap/*.cuh} shipped as classpath
 * resources of this module. Generated code includes {@code "klap/klap.cuh"}; the CLI writes the
 * headers next to its output (or onto nvcc's include path) with {@link #writeTo(Path)}.
 *
 * <p>The list of headers comes from the index resource {@code klap/HEADERS} (one file name per
 * line), so no directory listing of the jar is needed.
 */
public final class RuntimeHeaders {
  private static final String DIR = "klap/";
  private static final String INDEX = DIR + "HEADERS";

  private RuntimeHeaders() {}

  /** The header file names under {@code klap/}, e.g. {@code "klap.cuh"}, in index order. */
  public static List<String> names() {
    String text = new String(read(INDEX), StandardCharsets.UTF_8);
    List<String> names = new ArrayList<>();
    for (String line : text.split("\\R")) {
      String name = line.strip();
      if (!name.isEmpty() && !name.startsWith("#")) names.add(name);
    }
    return List.copyOf(names);
  }

  /**
   * Writes every header to {@code dir/klap/<name>}, creating directories and replacing existing
   * files, so that {@code -I dir} makes {@code #include "klap/klap.cuh"} resolve. Safe while other
   * processes read or write the same directory (parallel builds, {@code make -j}: several klap runs
   * with one output directory, and nvcc reading the headers meanwhile): a header that already has
   * the right content is left alone, and one that has not is replaced by {@link AtomicFiles#write},
   * so a reader sees the old file or the new one, never a partial one (found by review,
   * 2026-11-27: nvcc saw a half-written pool_state.cuh).
   *
   * A file there that klap did not write ({@link #foreign}) is never replaced: nothing a user had
   * is lost (review 2026-12-01: a user's own {@code klap/promote.cuh} next to the output was
   * silently overwritten).
   *
   * @throws UncheckedIOException if a header cannot be read or written, or if a file of that name
   *     exists that klap did not write
   */
  public static void writeTo(Path dir) {
    Path out = dir.resolve("klap");
    Path theirs = foreign(dir);
    if (theirs != null) {
      throw new UncheckedIOException(new IOException(theirs + " exists and was not written by klap; klap does not "
          + "replace it (write the output to another directory, or pass --no-runtime-headers and -I a directory "
          + "that holds klap's headers)"));
    }
    try {
      Files.createDirectories(out);
      for (String name : names()) {
        byte[] content = read(DIR + name);
        Path target = out.resolve(name);
        if (Files.isRegularFile(target) && java.util.Arrays.equals(Files.readAllBytes(target), content)) {
          continue;
        }
        AtomicFiles.write(target, content);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the klap runtime headers to " + out, e);
    }
  }

  /**
   * @return the first {@code dir/klap/<name>} of a header name that exists, differs from klap's
   *     header and that klap did not write: a regular file that does not begin with klap's first
   *     line {@code // klap/<name> --} (every version of every header begins so), or anything else
   *     (a link, a directory); null if none
   */
  public static Path foreign(Path dir) {
    for (String name : names()) {
      Path target = dir.resolve("klap").resolve(name);
      if (!Files.exists(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        continue;
      }
      byte[] banner = ("// klap/" + name + " --").getBytes(StandardCharsets.UTF_8);
      try {
        if (Files.isRegularFile(target) && java.util.Arrays.equals(Files.readAllBytes(target), read(DIR + name))) {
          continue;
        }
        if (!Files.isRegularFile(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          return target;
        }
        try (InputStream in = Files.newInputStream(target)) {
          if (!java.util.Arrays.equals(in.readNBytes(banner.length), banner)) {
            return target;
          }
        }
      } catch (IOException e) {
        return target;
      }
    }
    return null;
  }

  private static byte[] read(String resource) {
    try (InputStream in = RuntimeHeaders.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new UncheckedIOException(new IOException("missing classpath resource " + resource));
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read classpath resource " + resource, e);
    }
  }
}
