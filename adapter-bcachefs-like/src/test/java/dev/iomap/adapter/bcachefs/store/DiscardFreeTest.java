package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.iomap.adapter.support.BlockRange;
import dev.iomap.device.IoPurpose;
import dev.iomap.device.ReadOnlyDeviceException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link BtreeStore#discardFree}: only blocks free in the allocator are discarded; blocks freed by a
 * transaction not yet durable, referenced blocks and blocks allocated but not yet referenced (a write
 * in flight) keep their data until the freeing transaction is flushed.
 */
class DiscardFreeTest {
    private static final int BLOCK = 4096;

    private static byte[] filled(BlockRange blocks) {
        byte[] bytes = new byte[(int) blocks.length() * BLOCK];
        Arrays.fill(bytes, (byte) 0x5a);
        return bytes;
    }

    private static byte[] read(RamBlockDevice device, BlockRange blocks) throws IOException {
        ByteBuffer bytes = ByteBuffer.allocate((int) blocks.length() * BLOCK);
        device.read(blocks.start() * BLOCK, bytes);
        return bytes.array();
    }

    @Test
    void onlyDurablyFreeBlocksAreDiscarded() throws Exception {
        RamBlockDevice device = StoreBasicsTest.formatted(BLOCK, 4L << 20);
        try (BtreeStore store = BtreeStore.open(device, false)) {
            DataSpace space = store.space();
            space.reserve(8);
            BlockRange all = space.allocate(8, -1);
            assertEquals(8, all.length());
            device.write(all.start() * BLOCK, List.of(ByteBuffer.wrap(filled(all))), IoPurpose.DATA).join();
            BlockRange durablyFreed = new BlockRange(all.start(), 2);
            BlockRange pendingFree = new BlockRange(all.start() + 2, 2);
            BlockRange referenced = new BlockRange(all.start() + 4, 2);
            BlockRange inFlight = new BlockRange(all.start() + 6, 2);
            store.flush(store.update().addRefs(new BlockRange(all.start(), 6), 1).commit());
            store.flush(store.update().addRefs(durablyFreed, -1).commit());
            long seq = store.update().addRefs(pendingFree, -1).commit();

            long before = device.stats().discardedBytes();
            long discarded = store.discardFree(0, store.deviceBlocks(), 1);

            assertEquals(device.stats().discardedBytes() - before, discarded * BLOCK);
            assertArrayEquals(new byte[2 * BLOCK], read(device, durablyFreed));
            assertArrayEquals(filled(pendingFree), read(device, pendingFree), "freed, not yet durable");
            assertArrayEquals(filled(referenced), read(device, referenced));
            assertArrayEquals(filled(inFlight), read(device, inFlight), "allocated, not yet referenced");

            store.flush(seq);
            assertEquals(2, store.discardFree(pendingFree.start(), pendingFree.end(), 1), "durable now, clipped");
            assertEquals(discarded + 2, store.discardFree(0, store.deviceBlocks(), 1));
            assertArrayEquals(new byte[2 * BLOCK], read(device, pendingFree));
            assertArrayEquals(filled(referenced), read(device, referenced));
            assertArrayEquals(filled(inFlight), read(device, inFlight));
            assertEquals(0, store.discardFree(0, store.deviceBlocks(), store.deviceBlocks()), "no run that long");
        }
    }

    @Test
    void aReadOnlyStoreRefusesEvenWithNothingToDiscard() throws Exception {
        RamBlockDevice device = StoreBasicsTest.formatted(BLOCK, 4L << 20);
        try (BtreeStore store = BtreeStore.open(device, true)) {
            assertThrows(ReadOnlyDeviceException.class, () -> store.discardFree(0, 1, 1));
            assertEquals(0, device.stats().discardedBytes());
        }
    }
}
