package dev.iomap.nio;

/** Links and attributes through NIO on the bcachefs-like adapter. */
class BcachefsLikeLinksTest extends IomapLinksContract {
    @Override
    String adapter() {
        return "bcachefs-like";
    }
}
