package dev.iomap.nio;

/** Links and attributes through NIO on the gfs2-like adapter. */
class Gfs2LikeLinksTest extends IomapLinksContract {
    @Override
    String adapter() {
        return "gfs2-like";
    }
}
