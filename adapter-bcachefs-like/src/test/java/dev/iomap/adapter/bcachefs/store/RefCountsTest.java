package dev.iomap.adapter.bcachefs.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.iomap.api.CorruptFileSystemException;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reference runs and the allocation-tree ops that mirror them. */
class RefCountsTest {

    private static void assertPut(StoreOp op, long start, long length, int count) {
        StoreOp.Put put = (StoreOp.Put) op;
        assertEquals(RefCounts.key(start), put.key());
        assertArrayEquals(RefCounts.value(length, count), put.value());
    }

    @Test
    void runsSplitAndMergeWithExactTreeKeys() throws IOException {
        RefCounts refs = new RefCounts();
        RefCounts.Change a = refs.apply(100, 10, 1);
        assertEquals(1, a.treeOps().size());
        assertPut(a.treeOps().getFirst(), 100, 10, 1);
        RefCounts.Change b = refs.apply(105, 10, 1);
        assertEquals("[RefRun[blocks=[100, +5), count=1], RefRun[blocks=[105, +5), count=2], "
                + "RefRun[blocks=[110, +5), count=1]]", refs.runs().toString());
        assertEquals(3, b.treeOps().size());
        assertPut(b.treeOps().get(0), 100, 5, 1);
        assertPut(b.treeOps().get(1), 105, 5, 2);
        assertPut(b.treeOps().get(2), 110, 5, 1);
        RefCounts.Change down = refs.apply(105, 5, -1);
        assertEquals("[RefRun[blocks=[100, +15), count=1]]", refs.runs().toString());
        assertEquals(List.of(), down.zeroed());
        assertEquals(List.of(new StoreOp.Delete(RefCounts.key(105)), new StoreOp.Delete(RefCounts.key(110))),
                down.treeOps().subList(0, 2));
        assertPut(down.treeOps().get(2), 100, 15, 1);
        assertEquals(1, refs.count(114));
        assertEquals(0, refs.count(115));
        RefCounts.Change free = refs.apply(100, 15, -1);
        assertEquals("[[100, +15)]", free.zeroed().toString());
        assertEquals(List.of(new StoreOp.Delete(RefCounts.key(100))), free.treeOps());
        assertEquals(List.of(), refs.runs());
    }

    @Test
    void aRunTouchingFromBelowMergesAndNegativeCountsAreRefused() throws IOException {
        RefCounts refs = new RefCounts();
        refs.apply(10, 4, 1);
        refs.apply(10, 4, 1);
        refs.apply(14, 5, 1);
        assertEquals("[RefRun[blocks=[10, +4), count=2], RefRun[blocks=[14, +5), count=1]]", refs.runs().toString());
        RefCounts.Change up = refs.apply(14, 5, 1);
        assertEquals("[RefRun[blocks=[10, +9), count=2]]", refs.runs().toString());
        assertEquals(2, up.treeOps().size(), up.treeOps().toString());
        assertEquals(new StoreOp.Delete(RefCounts.key(14)), up.treeOps().getFirst());
        assertPut(up.treeOps().get(1), 10, 9, 2);
        CorruptFileSystemException e = assertThrows(CorruptFileSystemException.class, () -> refs.apply(18, 3, -1));
        assertEquals("reference count of blocks [19, 21) would drop below 0", e.getMessage());
        assertEquals("[RefRun[blocks=[10, +9), count=2]]", refs.runs().toString(), "nothing changed");
        assertEquals("[[8, +2), [19, +2)]", refs.zeroIn(new dev.iomap.adapter.support.BlockRange(8, 13)).toString());
    }
}
