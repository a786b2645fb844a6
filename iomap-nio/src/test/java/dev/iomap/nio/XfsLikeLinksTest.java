package dev.iomap.nio;

/** Links and attributes through NIO on the xfs-like adapter. */
class XfsLikeLinksTest extends IomapLinksContract {
    @Override
    String adapter() {
        return "xfs-like";
    }
}
