package dev.iomap.nio;

import dev.iomap.testkit.snapfs.SnapAdapter;

/** The NIO contract on snapfs, the test kit's small example adapter. */
class SnapfsFilesTest extends IomapFilesContract {
    @Override
    String adapter() {
        return SnapAdapter.NAME;
    }
}
