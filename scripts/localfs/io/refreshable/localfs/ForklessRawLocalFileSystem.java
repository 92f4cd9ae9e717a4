package io.refreshable.localfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's local file system, without a process forked per call where Hadoop's native
 * library is not loaded (as with pyspark's jars). There, {@link RawLocalFileSystem} runs
 * {@code chmod} for every file and folder it creates, and {@code readlink} (on the path's
 * URI, which never names a link) for every {@code getFileLinkStatus}, which Delta's log store
 * calls around each commit: about 150 processes, ~5 ms each, in a small refresh cycle.
 * Here a permission is set with java.nio, and the link status of a path that is not a
 * symbolic link is its file status, as Hadoop returns it; a symbolic link, a sticky bit, or
 * a loaded native library take Hadoop's own way. No result differs.
 */
public class ForklessRawLocalFileSystem extends RawLocalFileSystem {
  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
    PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
    PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
    PosixFilePermission.OWNER_READ,
  };

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    short mode = permission.toShort();
    if (NativeIO.isAvailable() || (mode & ~0777) != 0) {
      super.setPermission(p, permission);
      return;
    }
    Set<PosixFilePermission> posix = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        posix.add(BITS[bit]);
      }
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), posix);
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (NativeIO.isAvailable() || Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);
  }
}
