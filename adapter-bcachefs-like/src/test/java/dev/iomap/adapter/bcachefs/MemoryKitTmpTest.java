package dev.iomap.adapter.bcachefs;

import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;

class MemoryKitTmpTest extends AdapterContractSuite {
    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new BcachefsLikeAdapter(new MemoryStoreAccess()), new Geometry(1024, 4096, 9))
                .withDeviceBlockSizeOfFilesystem()
                .withMounter((a, d, o) -> dev.iomap.core.vfs.CoreRuntime.mount(a, d, o));
    }
}
