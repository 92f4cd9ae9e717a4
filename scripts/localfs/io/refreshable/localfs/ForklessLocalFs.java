package io.refreshable.localfs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.local.LocalConfigKeys;

/**
 * Hadoop's {@code LocalFs} (the local file system of the {@code FileContext} API, which
 * Delta's log store writes commits through) over {@link ForklessRawLocalFileSystem}: the
 * {@code fs.AbstractFileSystem.file.impl} of the project's local Spark sessions.
 */
public class ForklessLocalFs extends ChecksumFs {
  /** As {@code LocalFs(URI, Configuration)}: the local file system's URI, whatever the path's. */
  public ForklessLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(conf));
  }

  /** Hadoop's {@code RawLocalFs}, delegating to {@link ForklessRawLocalFileSystem}. */
  static final class Raw extends DelegateToFileSystem {
    Raw(Configuration conf) throws IOException, URISyntaxException {
      super(
          FsConstants.LOCAL_FS_URI,
          new ForklessRawLocalFileSystem(),
          conf,
          FsConstants.LOCAL_FS_URI.getScheme(),
          false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1;
    }

    @Override
    @Deprecated
    public FsServerDefaults getServerDefaults() throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public FsServerDefaults getServerDefaults(Path f) throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public boolean isValidName(String src) {
      return true;
    }
  }
}
