package dev.iomap.nio;

/** The NIO contract on the xfs-like adapter. */
class XfsLikeFilesTest extends IomapFilesContract {
    @Override
    String adapter() {
        return "xfs-like";
    }
}
