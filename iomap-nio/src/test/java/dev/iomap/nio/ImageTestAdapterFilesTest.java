package dev.iomap.nio;

import dev.iomap.nio.testadapter.ImageTestAdapter;

/** The NIO contract on the small image-test adapter of this module's tests. */
class ImageTestAdapterFilesTest extends IomapFilesContract {
    @Override
    String adapter() {
        return ImageTestAdapter.NAME;
    }
}
