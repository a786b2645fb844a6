package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The list reclaim takes folios from: order, removal, putting back, and a folio removed while taken. */
class FolioLruTest {
    /** A folio with no real memory and no cache: the list only looks at its links and stamps. */
    private static Folio folio(long index) {
        return new Folio(null, index, 0,
                new FolioMemoryPool.FolioMemory(MemorySegment.ofArray(new byte[0]), 0, -1, null), null);
    }

    /** @return a list with {@code folios} added in this order */
    private static FolioLru listOf(Folio... folios) {
        FolioLru lru = new FolioLru();
        for (Folio folio : folios) {
            lru.add(folio);
        }
        return lru;
    }

    @Test
    void foliosComeOffInTheOrderTheyWentOn() {
        Folio a = folio(0);
        Folio b = folio(1);
        Folio c = folio(2);
        FolioLru lru = listOf(a, b, c);

        assertThat(lru.size()).isEqualTo(3);
        assertThat(lru.takeOldest()).isSameAs(a);
        assertThat(lru.takeOldest()).isSameAs(b);
        assertThat(lru.takeOldest()).isSameAs(c);
        assertThat(lru.takeOldest()).isNull();
        assertThat(lru.size()).isZero();
    }

    @Test
    void removingUnlinksFromTheHeadTheMiddleAndTheTail() {
        Folio[] folios = {folio(0), folio(1), folio(2), folio(3), folio(4)};
        FolioLru lru = listOf(folios);

        lru.remove(folios[0]);
        lru.remove(folios[2]);
        lru.remove(folios[4]);
        lru.remove(folios[2]); // twice: nothing

        assertThat(lru.size()).isEqualTo(2);
        assertThat(lru.takeOldest()).isSameAs(folios[1]);
        assertThat(lru.takeOldest()).isSameAs(folios[3]);
        assertThat(lru.takeOldest()).isNull();
    }

    @Test
    void aFolioPutBackGoesToTheTail() {
        Folio a = folio(0);
        Folio b = folio(1);
        FolioLru lru = listOf(a, b);

        Folio taken = lru.takeOldest();
        assertThat(FolioLru.wasAccessedSinceListed(taken)).isFalse();
        lru.putBack(taken);

        assertThat(lru.takeOldest()).isSameAs(b);
        assertThat(lru.takeOldest()).isSameAs(a);
    }

    @Test
    void aFolioRemovedWhileTakenIsNotPutBackAndRemovingItTwiceChangesNothing() {
        Folio a = folio(0);
        Folio b = folio(1);
        FolioLru lru = listOf(a, b);

        Folio taken = lru.takeOldest();
        // What PageCache.remove does while reclaim holds the folio.
        taken.markRemoved();
        lru.remove(taken);
        lru.putBack(taken);

        assertThat(lru.size()).isEqualTo(1);
        assertThat(lru.takeOldest()).isSameAs(b);
        assertThat(lru.takeOldest()).isNull();
    }

    @Test
    void puttingBackAFolioStillListedChangesNothing() {
        Folio a = folio(0);
        Folio b = folio(1);
        FolioLru lru = listOf(a, b);

        lru.putBack(a);

        assertThat(lru.size()).isEqualTo(2);
        assertThat(lru.takeOldest()).isSameAs(a);
    }
}
