package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.BtreeStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.device.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Helpers of the module's tests: format, mount, and look at what an unmounted image holds. */
final class Images {
    static final BcachefsLikeAdapter ADAPTER = new BcachefsLikeAdapter();

    private Images() {
    }

    static void format(BlockDevice device, Map<String, String> properties) throws IOException {
        ADAPTER.format(device, new FormatOptions(device.blockSize(), "test", properties));
    }

    static IomapFileSystem mount(BlockDevice device) throws IOException {
        return CoreRuntime.mount(ADAPTER, device, MountOptions.defaults());
    }

    /** @return the data extents of an unmounted image, in key order */
    static List<BcachefsVolume.Extent> extents(BlockDevice device) throws IOException {
        List<BcachefsVolume.Extent> out = new ArrayList<>();
        try (BtreeStore store = BtreeStore.open(device, true)) {
            for (KeyValue kv : store.scan(new BKey(Keys.EXTENTS, 0, 0), new BKey(Keys.EXTENTS + 1, 0, 0),
                    Integer.MAX_VALUE)) {
                ExtentValue v = ExtentValue.decode("test", kv.value(), device.blockSize());
                out.add(new BcachefsVolume.Extent(kv.key().inode(), kv.key().offset() - v.logicalBlocks(), kv.key().offset(),
                        v));
            }
        }
        return out;
    }

    /** @return every block that starts with the store's node magic (live or stale nodes) */
    static List<Long> nodeMagicBlocks(BlockDevice device) throws IOException {
        List<Long> out = new ArrayList<>();
        int bs = device.blockSize();
        ByteBuffer block = ByteBuffer.allocate(bs).order(ByteOrder.LITTLE_ENDIAN);
        for (long b = 0; b < device.capacity() / bs; b++) {
            block.clear();
            device.read(b * bs, block);
            if (block.getInt(0) == 0x4e484342) {
                out.add(b);
            }
        }
        return out;
    }
}
