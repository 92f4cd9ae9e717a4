package io.refreshable.localfs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * {@link LocalFileSystem} (checksummed) over {@link ForklessRawLocalFileSystem}: the
 * {@code fs.file.impl} of the project's local Spark sessions.
 */
public class ForklessLocalFileSystem extends LocalFileSystem {
  public ForklessLocalFileSystem() {
    super(new ForklessRawLocalFileSystem());
  }
}
