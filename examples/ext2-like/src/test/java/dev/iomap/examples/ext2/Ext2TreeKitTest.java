package dev.iomap.examples.ext2;

import dev.iomap.adapter.support.skeleton.SkeletonAdapter;
import dev.iomap.adapter.support.skeleton.SkeletonConfig;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;

/**
 * The ext2-like model under the skeleton's tree namespace (DIRECTORIES): the directory code the flat
 * example does not reach, through the whole kit on one geometry (4 KiB blocks, 64 KiB pages).
 */
class Ext2TreeKitTest extends AdapterContractSuite {
    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new SkeletonAdapter(SkeletonConfig.of("ext2-like-tree",
                "the ext2-like model with directories", "IOMAPEX3", true), new Ext2Model()),
                new Geometry(4096, 65536, 0));
    }
}
