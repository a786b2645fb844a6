package dev.iomap.it;

import dev.iomap.api.Capability;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import dev.iomap.testkit.snapfs.SnapAdapter;

/**
 * snapfs declaring everything but DURABLE_FSYNC (fsync commits no metadata), as the CLI's tests use
 * it, through the whole kit on one geometry: the power-cut suite is skipped, everything else must
 * hold. The mounter mounts this instance: the registered "snapfs" declares every capability.
 */
class SnapfsWithoutDurableFsyncKitTest extends AdapterContractSuite {

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(SnapAdapter.without(Capability.DURABLE_FSYNC), new Geometry(4096, 4096, 0))
                .withMounter(CoreRuntime::mount);
    }
}
