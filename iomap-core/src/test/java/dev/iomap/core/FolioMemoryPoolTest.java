package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.mm.CacheStats;
import dev.iomap.core.mm.Folio;
import dev.iomap.core.mm.FolioMemoryPool;
import dev.iomap.core.mm.FolioMemoryStats;
import dev.iomap.core.mm.PageCache;
import dev.iomap.devices.RamBlockDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The folio memory pool: a buddy allocator bounded by the cache budget, memory reused explicitly. */
class FolioMemoryPoolTest {
    private static final int PAGE = 4096;

    @Test
    void splitsAChunkIntoBuddiesAndMergesThemBack() {
        FolioMemoryPool pool = new FolioMemoryPool(4 * PAGE, PAGE, 2);

        FolioMemoryPool.FolioMemory a = pool.allocate(0);
        FolioMemoryPool.FolioMemory b = pool.allocate(0);
        FolioMemoryPool.FolioMemory c = pool.allocate(1);

        assertThat(a.handle()).isZero();
        assertThat(b.handle()).isEqualTo(PAGE);
        assertThat(c.handle()).isEqualTo(2 * PAGE);
        assertThat(c.segment().byteSize()).isEqualTo(2 * PAGE);
        assertThat(pool.allocate(0)).as("one chunk of four pages, all handed out").isNull();
        assertThat(pool.inUseBytes()).isEqualTo(4 * PAGE);

        pool.free(b);
        pool.free(a);
        assertThat(pool.allocate(2)).as("a and b merged, but c still holds the other half").isNull();
        pool.free(c);
        FolioMemoryPool.FolioMemory whole = pool.allocate(2);
        assertThat(whole.handle()).isZero();
        assertThat(whole.segment().address()).isEqualTo(a.segment().address());
        assertThat(pool.reservedBytes()).isEqualTo(4 * PAGE);
    }

    @Test
    void randomAllocationsNeverOverlapAndAllMergeBackLowestFirst() {
        int maxOrder = 4;
        int chunks = 40;  // 640 pages: the free bitmaps grow past one word at every order
        FolioMemoryPool pool = new FolioMemoryPool((long) chunks * (PAGE << maxOrder), PAGE, maxOrder);
        SplittableRandom random = new SplittableRandom(Long.getLong("iomap.test.seed", 7));
        List<FolioMemoryPool.FolioMemory> live = new ArrayList<>();
        BitSet usedPages = new BitSet();
        for (int step = 0; step < 20_000; step++) {
            if (live.isEmpty() || random.nextInt(100) < 55) {
                int order = random.nextInt(maxOrder + 1);
                FolioMemoryPool.FolioMemory block = pool.allocate(order);
                if (block == null) {
                    continue;
                }
                int first = (int) (block.handle() / PAGE);
                int pages = 1 << order;
                assertThat(first % pages).as("naturally aligned").isZero();
                assertThat(usedPages.get(first, first + pages).isEmpty()).as("overlaps a live block").isTrue();
                usedPages.set(first, first + pages);
                live.add(block);
            } else {
                FolioMemoryPool.FolioMemory block = live.remove(random.nextInt(live.size()));
                int first = (int) (block.handle() / PAGE);
                usedPages.clear(first, first + (1 << block.order()));
                pool.free(block);
            }
            assertThat(pool.inUseBytes()).isEqualTo((long) usedPages.cardinality() * PAGE);
        }
        live.forEach(pool::free);
        for (int i = 0; i < chunks; i++) {
            assertThat(pool.allocate(maxOrder).handle()).as("everything merged back, lowest first")
                    .isEqualTo((long) i * (PAGE << maxOrder));
        }
        assertThat(pool.allocate(0)).isNull();
    }

    @Test
    void aBlockIsAtItsCopyBaseInItsCopyView() {
        FolioMemoryPool pool = new FolioMemoryPool(16 * PAGE, PAGE, 2);
        List<FolioMemoryPool.FolioMemory> blocks = new ArrayList<>();
        for (int order : new int[] {0, 1, 0, 2, 2}) {
            blocks.add(pool.allocate(order));
        }
        byte mark = 1;
        for (FolioMemoryPool.FolioMemory block : blocks) {
            ByteBuffer view = pool.copyView(block);
            assertThat(view).as("pooled blocks copy through the pool's view").isNotNull();
            int size = (int) block.segment().byteSize();
            view.put(FolioMemoryPool.copyBase(block), new byte[] {mark}, 0, 1);
            view.put(FolioMemoryPool.copyBase(block) + size - 1, new byte[] {(byte) -mark}, 0, 1);
            assertThat(block.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)).isEqualTo(mark);
            assertThat(block.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, size - 1)).isEqualTo((byte) -mark);
            mark++;
        }
        FolioMemoryPool.FolioMemory overflow = pool.allocateOverflow(0);
        assertThat(pool.copyView(overflow)).as("an overflow block has no pool view").isNull();
        pool.free(overflow);
        pool.close();
    }

    @Test
    void aFolioOnAPooledBlockCopiesOnlyWithinItself() throws Exception {
        try (IomapCache cache = new IomapCache(PageCacheOptions.builder().maxFolioOrder(0).build(),
                new RamBlockDevice(PAGE, 1 << 20))) {
            OpenFile file = cache.openBlockDevice();
            file.write(PAGE, ByteBuffer.wrap(new byte[] {7, 7, 7}));
            Folio folio = file.inode().pageCache().lookup(1);
            assertThat(folio.copyView().capacity()).as("a pooled folio copies through the pool's view")
                    .isGreaterThan(folio.size());

            BufferCopySource source = new BufferCopySource(ByteBuffer.allocate(2 * PAGE));
            assertThatThrownBy(() -> source.copyTo(folio, PAGE - 10, 20))
                    .as("20 bytes from 10 before the folio's end would spill into the next block of the view")
                    .isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(TestIo.read(file, PAGE, 3)).containsExactly(7, 7, 7);
        }
    }

    @Test
    void freeingABlockTwiceIsCaught() {
        FolioMemoryPool pool = new FolioMemoryPool(4 * PAGE, PAGE, 2);
        FolioMemoryPool.FolioMemory a = pool.allocate(0);
        FolioMemoryPool.FolioMemory b = pool.allocate(0);
        pool.free(a);

        assertThatThrownBy(() -> pool.free(a)).isInstanceOf(IllegalStateException.class)
                .hasMessage("block 0 freed twice");
        assertThat(pool.inUseBytes()).as("the refused free changed nothing").isEqualTo(PAGE);
        pool.free(b);
        assertThat(pool.allocate(2).handle()).isZero();
    }

    @Test
    void neverReservesMoreThanItsCapacity() {
        FolioMemoryPool pool = new FolioMemoryPool(3 * 8 * PAGE, PAGE, 3);

        int blocks = 0;
        while (pool.allocate(1) != null) {
            blocks++;
        }

        assertThat(blocks).isEqualTo(12);
        assertThat(pool.reservedBytes()).isEqualTo(pool.capacity()).isEqualTo(3 * 8 * PAGE);
        assertThat(pool.allocate(0)).isNull();
    }

    @Test
    void overflowBlocksAreCountedAndGivenBack() {
        FolioMemoryPool pool = new FolioMemoryPool(PAGE, PAGE, 0);
        assertThat(pool.allocate(0)).isNotNull();

        FolioMemoryPool.FolioMemory extra = pool.allocateOverflow(0);
        extra.segment().fill((byte) 1);
        assertThat(pool.overflowBytes()).isEqualTo(PAGE);
        assertThat(pool.overflowAllocations()).isEqualTo(1);

        pool.free(extra);
        assertThat(pool.overflowBytes()).isZero();
        assertThat(pool.overflowAllocations()).isEqualTo(1);
        assertThatThrownBy(() -> extra.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0))
                .isInstanceOf(IllegalStateException.class);
    }

    /**
     * A reader copying out of a folio without its lock holds a reference: the folio may leave the
     * cache under it, but its memory is not handed to another folio until the reader is done.
     */
    @Test
    void memoryOfARemovedFolioIsNotReusedWhileAReaderHoldsIt() {
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(0).cacheBudgetBytes(2 * PAGE).build();
        PageCache cache = new PageCache(options, PAGE, new CacheStats());
        Folio first = cache.grabLocked(0, 0);
        first.unlock();
        long firstAddress = first.memory().address();
        assertThat(first.tryGet()).isTrue();

        first.lock();
        cache.remove(first);
        first.unlock();
        Folio second = cache.grabLocked(1, 0);
        second.unlock();
        Folio third = cache.grabLocked(2, 0);
        third.unlock();

        assertThat(second.memory().address()).isNotEqualTo(firstAddress);
        assertThat(third.memory().address()).as("the pool is full: an overflow block, not the reader's")
                .isNotEqualTo(firstAddress);
        assertThat(first.tryGet()).as("a reader may still take a reference to a removed folio").isTrue();
        first.put();

        first.put();
        assertThat(first.tryGet()).as("released").isFalse();
        for (Folio folio : new Folio[] {second, third}) {
            folio.lock();
            cache.remove(folio);
            folio.unlock();
        }
        Folio fourth = cache.grabLocked(3, 0);
        fourth.unlock();
        assertThat(fourth.memory().address()).isEqualTo(firstAddress);
    }

    /**
     * Writing and reading back eight times the budget through one cache keeps the pool within its
     * capacity (budget plus one largest folio) and never needs memory outside it: reclaimed folios
     * give their memory back at once.
     */
    @Test
    void streamingEightTimesTheBudgetStaysWithinThePool() throws Exception {
        long budget = 1L << 20;
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(4).cacheBudgetBytes(budget)
                .dirtyLimitBytes(budget / 4).dirtyBackgroundBytes(budget / 8).build();
        RamBlockDevice device = new RamBlockDevice(PAGE, 16L << 20);
        try (IomapCache cache = new IomapCache(options, device)) {
            OpenFile file = cache.openBlockDevice();
            byte[] chunk = new byte[64 << 10];
            for (long pos = 0; pos < 8 * budget; pos += chunk.length) {
                java.util.Arrays.fill(chunk, (byte) (pos >>> 16));
                file.write(pos, ByteBuffer.wrap(chunk));
            }
            file.fsync();
            ByteBuffer back = ByteBuffer.allocate(chunk.length);
            for (long pos = 0; pos < 8 * budget; pos += chunk.length) {
                back.clear();
                file.read(pos, back);
                assertThat(back.get(0)).isEqualTo((byte) (pos >>> 16));
                assertThat(back.get(chunk.length - 1)).isEqualTo((byte) (pos >>> 16));
            }

            FolioMemoryStats memory = cache.memoryStats();
            assertThat(memory.poolCapacity()).isEqualTo(budget + (PAGE << 4));
            assertThat(memory.reserved()).isLessThanOrEqualTo(memory.poolCapacity());
            assertThat(memory.inUse()).isLessThanOrEqualTo(memory.reserved());
            assertThat(memory.overflowAllocations()).isZero();
            assertThat(cache.cachedBytes()).isLessThanOrEqualTo(budget);
        }
    }

    /**
     * When every folio is under writeback nothing can be reclaimed; a new folio then waits for a
     * writeback to end and takes the memory reclaim frees, instead of growing past the pool.
     */
    @Test
    void aFullPoolWaitsForWritebackBeforeGoingOutsideIt() throws Exception {
        PageCacheOptions options = PageCacheOptions.builder().maxFolioOrder(0).cacheBudgetBytes(4 * PAGE)
                .dirtyBackgroundBytes(4 * PAGE).dirtyLimitBytes(8 * PAGE).build();
        HeldWrites device = new HeldWrites(new RamBlockDevice(PAGE, 1L << 20));
        IomapCache cache = new IomapCache(options, device);
        try {
            OpenFile file = cache.openBlockDevice();
            for (int page = 0; page < 5; page++) {
                file.write((long) page * PAGE, ByteBuffer.wrap(new byte[PAGE]));
            }
            file.inode().writeback(0, Long.MAX_VALUE, false);
            assertThat(device.held()).as("the five pages' writes are in flight").isPositive();
            assertThat(cache.memoryStats().inUse()).isEqualTo(cache.memoryStats().poolCapacity());

            Thread writer = new Thread(() -> {
                try {
                    file.write(5L * PAGE, ByteBuffer.wrap(new byte[PAGE]));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.start();
            while (writer.getState() != Thread.State.WAITING && writer.isAlive()) {
                Thread.sleep(1);
            }
            assertThat(writer.isAlive()).as("the writer waits for writeback").isTrue();
            device.releaseAll();
            writer.join(10_000);

            assertThat(writer.isAlive()).isFalse();
            assertThat(cache.memoryStats().overflowAllocations()).isZero();
            assertThat(cache.memoryStats().reserved()).isEqualTo(cache.memoryStats().poolCapacity());
        } finally {
            device.releaseAll();
            cache.close();
        }
    }

    /** Holds every write's completion until released; after that, writes complete as usual. */
    private static final class HeldWrites extends dev.iomap.device.ForwardingBlockDevice {
        private final java.util.List<java.util.concurrent.CompletableFuture<Void>> held = new java.util.ArrayList<>();
        private boolean holding = true;

        HeldWrites(dev.iomap.device.BlockDevice delegate) {
            super(delegate);
        }

        @Override
        public synchronized java.util.concurrent.CompletableFuture<Void> write(long offset,
                java.util.List<ByteBuffer> srcs, dev.iomap.device.IoPurpose purpose) {
            java.util.concurrent.CompletableFuture<Void> written = delegate.write(offset, srcs, purpose);
            if (!holding) {
                return written;
            }
            java.util.concurrent.CompletableFuture<Void> result = new java.util.concurrent.CompletableFuture<>();
            held.add(result);
            return written.thenCompose(done -> result);
        }

        synchronized int held() {
            return held.size();
        }

        synchronized void releaseAll() {
            holding = false;
            held.forEach(future -> future.complete(null));
            held.clear();
        }
    }
}
