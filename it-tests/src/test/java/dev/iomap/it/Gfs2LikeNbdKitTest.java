package dev.iomap.it;

import dev.iomap.adapter.gfs2.Gfs2LikeAdapter;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;

/**
 * gfs2-like (ordered data) through the whole kit on one geometry (4 KiB blocks and pages, 2 MiB folios)
 * with every device mirrored onto an export of a real nbd-server ({@link NbdMirrorLayer}).
 */
class Gfs2LikeNbdKitTest extends NbdKitSuite {
    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Gfs2LikeAdapter(), Geometry.largeFolios(4096, 4096))
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceLayer(layer());
    }
}
