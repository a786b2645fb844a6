package dev.iomap.nio;

import dev.iomap.testkit.snapfs.SnapAdapter;

/** Links and attributes through NIO on snapfs, the test kit's small example adapter. */
class SnapfsLinksTest extends IomapLinksContract {
    @Override
    String adapter() {
        return SnapAdapter.NAME;
    }
}
