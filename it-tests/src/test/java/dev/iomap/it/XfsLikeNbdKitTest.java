package dev.iomap.it;

import dev.iomap.adapter.xfs.XfsLikeAdapter;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;

/**
 * xfs-like through the whole kit on one geometry (4 KiB blocks and pages, 2 MiB folios) with every
 * device mirrored onto an export of a real nbd-server ({@link NbdMirrorLayer}).
 */
class XfsLikeNbdKitTest extends NbdKitSuite {
    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new XfsLikeAdapter(), Geometry.largeFolios(4096, 4096))
                .withDeviceBlockSizeOfFilesystem()
                .withDeviceLayer(layer());
    }
}
