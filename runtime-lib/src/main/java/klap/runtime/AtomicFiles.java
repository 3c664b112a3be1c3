package klap.runtime;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writing a file so that a reader (nvcc in a parallel build, a user) sees its old content or its
 * new content, never part of it, and an interrupted run leaves no half-written file: klap's output
 * files ({@code klap -o}) and the runtime headers it writes next to them ({@link RuntimeHeaders}).
 */
public final class AtomicFiles {
  private AtomicFiles() {}

  /**
   * Writes {@code content} to a temporary file in {@code target}'s directory (created if missing),
   * then renames it over {@code target} (an atomic move where the file system has one). The
   * temporary file is created like any new file (permissions from the umask, as {@code nvcc -o}
   * would), or takes the permissions of the file it replaces. Its name is unique per process,
   * thread and moment, so concurrent writers of one target do not collide; the last rename wins.
   *
   * @throws IOException if the directory or the file cannot be written; no temporary file is left
   */
  public static void write(Path target, byte[] content) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path tmp = dir.resolve("." + target.getFileName() + "." + ProcessHandle.current().pid() + "."
        + Thread.currentThread().getId() + "." + Long.toHexString(System.nanoTime()) + ".tmp");
    try {
      Files.write(tmp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      if (Files.exists(target)) {
        try {
          Files.setPosixFilePermissions(tmp, Files.getPosixFilePermissions(target));
        } catch (UnsupportedOperationException | IOException e) {
          // not a POSIX file system, or not ours to read: keep the default permissions
        }
      }
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
