package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link FolioIndex} against a {@link TreeMap} model: seeded random sequences of inserts of folios of
 * mixed orders, removes, mark changes, lookups from every page, ceiling searches, range walks and
 * next-marked searches, near 0, across level boundaries and at the top of the index range; then
 * readers racing a writer.
 */
class FolioIndexTest {
    private static final long SEED = Long.getLong("iomap.test.seed", 20261202L);
    private static final int OPS = Integer.getInteger("iomap.test.ops", 20_000);
    /** Where random indices fall: 2^14 pages from each of these. */
    private static final long[] WINDOWS = {0, 1L << 18, (1L << 36) - (1L << 13), 1L << 48,
            Long.MAX_VALUE - (1L << 14) + 1};
    private static final long WINDOW_PAGES = 1L << 14;

    /** A folio with no real memory: the index only looks at its index and order. */
    private static Folio folio(long index, int order) {
        return new Folio(null, index, order,
                new FolioMemoryPool.FolioMemory(MemorySegment.ofArray(new byte[0]), order, -1, null), null);
    }

    /** The model: folios by first index, and the marked indices. */
    private static final class Model {
        final TreeMap<Long, Folio> folios = new TreeMap<>();
        final List<TreeSet<Long>> marks = List.of(new TreeSet<>(), new TreeSet<>());

        Folio covering(long index) {
            Map.Entry<Long, Folio> floor = folios.floorEntry(index);
            return floor != null && index <= last(floor.getValue()) ? floor.getValue() : null;
        }

        boolean overlaps(long first, long last) {
            Folio covering = covering(first);
            Long next = folios.ceilingKey(first);
            return covering != null || (next != null && next <= last);
        }

        Folio findFrom(long index) {
            Folio covering = covering(index);
            if (covering != null) {
                return covering;
            }
            Map.Entry<Long, Folio> next = folios.ceilingEntry(index);
            return next == null ? null : next.getValue();
        }

        List<Folio> collect(long first, long last) {
            List<Folio> result = new ArrayList<>();
            Folio covering = covering(first);
            if (covering != null) {
                result.add(covering);
            }
            result.addAll(folios.subMap(first, covering == null, last, true).values());
            return result;
        }

        long nextMarked(int mark, long from, long last) {
            Long next = marks.get(mark).ceiling(from);
            return next == null || next > last ? -1 : next;
        }
    }

    private static long last(Folio folio) {
        return folio.index() + ((1L << folio.order()) - 1);
    }

    private static long randomIndex(Random random) {
        long window = WINDOWS[random.nextInt(WINDOWS.length)];
        return window + random.nextLong(WINDOW_PAGES);
    }

    private static int randomOrder(Random random) {
        return switch (random.nextInt(4)) {
            case 0, 1 -> 0;
            case 2 -> random.nextInt(1, 7);
            default -> random.nextInt(7, 13);
        };
    }

    @Test
    void matchesATreeMapModel() {
        for (long seed = SEED; seed < SEED + 4; seed++) {
            runAgainstModel(seed, OPS);
        }
    }

    private static void runAgainstModel(long seed, int ops) {
        Random random = new Random(seed);
        FolioIndex index = new FolioIndex();
        Model model = new Model();
        for (int op = 0; op < ops; op++) {
            String where = "seed " + seed + " op " + op;
            switch (random.nextInt(10)) {
                case 0, 1, 2 -> {
                    int order = randomOrder(random);
                    long at = randomIndex(random) & -(1L << order);
                    Folio folio = folio(at, order);
                    if (model.overlaps(at, last(folio))) {
                        assertThatThrownBy(() -> index.insert(folio)).as(where)
                                .isInstanceOf(IllegalStateException.class);
                    } else {
                        index.insert(folio);
                        model.folios.put(at, folio);
                    }
                }
                case 3, 4 -> {
                    if (!model.folios.isEmpty()) {
                        Folio victim = model.findFrom(randomIndex(random));
                        if (victim == null) {
                            victim = model.folios.firstEntry().getValue();
                        }
                        assertThat(index.remove(folio(victim.index(), victim.order())))
                                .as(where + ": another folio at the same index").isFalse();
                        assertThat(index.remove(victim)).as(where).isTrue();
                        assertThat(index.remove(victim)).as(where + ": removed twice").isFalse();
                        model.folios.remove(victim.index());
                    }
                }
                case 5, 6 -> {
                    int mark = random.nextInt(2);
                    long at = randomMarkIndex(random, model);
                    assertThat(index.setMark(mark, at)).as(where).isEqualTo(model.marks.get(mark).add(at));
                }
                case 7, 8 -> {
                    int mark = random.nextInt(2);
                    Long marked = random.nextBoolean() ? model.marks.get(mark).ceiling(randomIndex(random)) : null;
                    long at = marked != null ? marked : randomMarkIndex(random, model);
                    assertThat(index.clearMark(mark, at)).as(where).isEqualTo(model.marks.get(mark).remove(at));
                }
                default -> probe(random, index, model, where);
            }
            assertThat(index.folioCount()).as(where).isEqualTo(model.folios.size());
            assertThat(index.markCount(FolioIndex.DIRTY)).as(where).isEqualTo(model.marks.get(0).size());
            assertThat(index.markCount(FolioIndex.WRITEBACK)).as(where).isEqualTo(model.marks.get(1).size());
            if (op % 500 == 0) {
                checkAll(index, model, where);
            }
        }
        checkAll(index, model, "seed " + seed + " end");
        // Empty it: every node must go.
        for (Folio folio : new ArrayList<>(model.folios.values())) {
            assertThat(index.remove(folio)).isTrue();
        }
        model.folios.clear();
        for (int mark = 0; mark < 2; mark++) {
            for (long at : model.marks.get(mark)) {
                assertThat(index.clearMark(mark, at)).isTrue();
            }
            model.marks.get(mark).clear();
        }
        checkAll(index, model, "seed " + seed + " emptied");
        assertThat(index.height()).isZero();
        assertThat(index.nodeCount()).isZero();
    }

    private static long randomMarkIndex(Random random, Model model) {
        if (random.nextBoolean() && !model.folios.isEmpty()) {
            Folio folio = model.findFrom(randomIndex(random));
            if (folio != null) {
                return folio.index();
            }
        }
        return randomIndex(random);
    }

    private static void probe(Random random, FolioIndex index, Model model, String where) {
        for (int i = 0; i < 8; i++) {
            long at = randomIndex(random);
            assertThat(index.get(at)).as(where + " get " + at).isSameAs(model.covering(at));
            assertThat(index.findFrom(at)).as(where + " findFrom " + at).isSameAs(model.findFrom(at));
            long last = random.nextBoolean() ? Long.MAX_VALUE
                    : Math.min(Long.MAX_VALUE - at, random.nextLong(WINDOW_PAGES)) + at;
            for (int mark = 0; mark < 2; mark++) {
                assertThat(index.nextMarked(mark, at, last)).as(where + " nextMarked " + at + ".." + last)
                        .isEqualTo(model.nextMarked(mark, at, last));
                assertThat(index.isMarked(mark, at)).isEqualTo(model.marks.get(mark).contains(at));
            }
            List<Folio> got = new ArrayList<>();
            index.collect(at, last, got);
            assertThat(got).as(where + " collect " + at + ".." + last).containsExactlyElementsOf(model.collect(at, last));
        }
    }

    /** Every page of every folio and its neighbours, every mark, whole-range walks, node count. */
    private static void checkAll(FolioIndex index, Model model, String where) {
        for (Folio folio : model.folios.values()) {
            for (long page = 0; page < 1L << folio.order(); page++) {
                assertThat(index.get(folio.index() + page)).as(where + " page " + page).isSameAs(folio);
            }
            if (folio.index() > 0) {
                assertThat(index.get(folio.index() - 1)).isSameAs(model.covering(folio.index() - 1));
                assertThat(index.findFrom(folio.index() - 1)).isSameAs(model.findFrom(folio.index() - 1));
            }
            if (last(folio) < Long.MAX_VALUE) {
                assertThat(index.get(last(folio) + 1)).isSameAs(model.covering(last(folio) + 1));
                assertThat(index.findFrom(last(folio) + 1)).isSameAs(model.findFrom(last(folio) + 1));
            }
        }
        List<Folio> all = new ArrayList<>();
        index.collect(0, Long.MAX_VALUE, all);
        assertThat(all).as(where).containsExactlyElementsOf(model.folios.values());
        for (int mark = 0; mark < 2; mark++) {
            List<Long> marked = new ArrayList<>();
            for (long at = index.nextMarked(mark, 0, Long.MAX_VALUE); at >= 0;
                    at = at == Long.MAX_VALUE ? -1 : index.nextMarked(mark, at + 1, Long.MAX_VALUE)) {
                marked.add(at);
            }
            assertThat(marked).as(where + " mark " + mark).containsExactlyElementsOf(model.marks.get(mark));
        }
        assertThat(index.nodeCount()).as(where + " nodes").isEqualTo(expectedNodes(model));
        assertThat(index.height()).as(where + " height").isEqualTo(expectedHeight(model));
    }

    /** The fewest levels whose top covers the largest index present or marked; 0 when there is none. */
    private static int expectedHeight(Model model) {
        long max = -1;
        if (!model.folios.isEmpty()) {
            max = last(model.folios.lastEntry().getValue());
        }
        for (TreeSet<Long> marks : model.marks) {
            if (!marks.isEmpty()) {
                max = Math.max(max, marks.last());
            }
        }
        if (max < 0) {
            return 0;
        }
        int height = 1;
        while (height < 11 && (max >>> (6 * height)) != 0) {
            height++;
        }
        return height;
    }

    /** One node per level per distinct prefix of an index present or marked. */
    private static int expectedNodes(Model model) {
        int height = expectedHeight(model);
        Set<Long> keys = new HashSet<>();
        for (Folio folio : model.folios.values()) {
            for (long page = 0; page < 1L << folio.order(); page += 64) {
                keys.add(folio.index() + page);
            }
        }
        model.marks.forEach(keys::addAll);
        Set<String> nodes = new HashSet<>();
        for (long key : keys) {
            for (int level = 0; level < height; level++) {
                int bits = 6 * (level + 1);
                nodes.add(level + ":" + (bits >= 64 ? 0 : key >>> bits));
            }
        }
        return nodes.size();
    }

    @Test
    void growsToTheTopOfTheRangeAndShrinksBack() {
        FolioIndex index = new FolioIndex();
        assertThat(index.height()).isZero();
        Folio low = folio(0, 0);
        index.insert(low);
        assertThat(index.height()).isEqualTo(1);
        Folio second = folio(64, 6);
        index.insert(second);
        assertThat(index.height()).isEqualTo(2);
        assertThat(index.get(127)).isSameAs(second);

        Folio top = folio(Long.MAX_VALUE - 4095, 12);
        index.insert(top);
        assertThat(index.height()).isEqualTo(11);
        assertThat(index.get(Long.MAX_VALUE)).isSameAs(top);
        assertThat(index.get(Long.MAX_VALUE - 4095)).isSameAs(top);
        assertThat(index.get(Long.MAX_VALUE - 4096)).isNull();
        assertThat(index.get(-1)).isNull();
        assertThat(index.findFrom(128)).isSameAs(top);
        assertThat(index.setMark(FolioIndex.DIRTY, Long.MAX_VALUE)).isTrue();
        assertThat(index.nextMarked(FolioIndex.DIRTY, 0, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
        assertThat(index.nextMarked(FolioIndex.DIRTY, 0, Long.MAX_VALUE - 1)).isEqualTo(-1);
        List<Folio> all = new ArrayList<>();
        index.collect(0, Long.MAX_VALUE, all);
        assertThat(all).containsExactly(low, second, top);

        assertThat(index.remove(top)).isTrue();
        assertThat(index.height()).as("the mark at the top keeps its path").isEqualTo(11);
        assertThat(index.clearMark(FolioIndex.DIRTY, Long.MAX_VALUE)).isTrue();
        assertThat(index.height()).isEqualTo(2);
        assertThat(index.nodeCount()).isEqualTo(3);
        assertThat(index.remove(second)).isTrue();
        assertThat(index.height()).isEqualTo(1);
        assertThat(index.get(0)).isSameAs(low);
        assertThat(index.remove(low)).isTrue();
        assertThat(index.height()).isZero();
        assertThat(index.nodeCount()).isZero();
    }

    @Test
    void aMarkWithoutAFolioKeepsItsLeafAndIsFound() {
        FolioIndex index = new FolioIndex();
        assertThat(index.setMark(FolioIndex.WRITEBACK, 5000)).isTrue();
        assertThat(index.setMark(FolioIndex.WRITEBACK, 5000)).isFalse();
        assertThat(index.markCount(FolioIndex.WRITEBACK)).isEqualTo(1);
        assertThat(index.get(5000)).isNull();
        assertThat(index.nextMarked(FolioIndex.WRITEBACK, 0, 4999)).isEqualTo(-1);
        assertThat(index.nextMarked(FolioIndex.WRITEBACK, 0, 5000)).isEqualTo(5000);
        assertThat(index.nextMarked(FolioIndex.DIRTY, 0, Long.MAX_VALUE)).isEqualTo(-1);
        assertThat(index.clearMark(FolioIndex.DIRTY, 5000)).isFalse();
        assertThat(index.clearMark(FolioIndex.WRITEBACK, 5000)).isTrue();
        assertThat(index.clearMark(FolioIndex.WRITEBACK, 5000)).isFalse();
        assertThat(index.nodeCount()).isZero();
    }

    /**
     * Readers look up, search and walk while a writer inserts and removes folios of mixed orders (and
     * makes the tree grow and shrink by using indices at the top of the range): a folio found must
     * cover the index it was found at, walks must be in order and in range, and folios and marks that
     * stay in place the whole time must always be found.
     */
    @Test
    void readersRacingAWriterOnlySeeCoveringFoliosAndNeverMissStableOnes() throws InterruptedException {
        FolioIndex index = new FolioIndex();
        Folio stableSmall = folio(3, 0);
        Folio stableLarge = folio(4096, 9);
        index.insert(stableSmall);
        index.insert(stableLarge);
        index.setMark(FolioIndex.DIRTY, 4096);
        index.setMark(FolioIndex.WRITEBACK, 3);
        long[] churn = {8, 1L << 20, 1L << 40, Long.MAX_VALUE - (1L << 13) + 1};
        AtomicBoolean done = new AtomicBoolean();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            long readerSeed = SEED + r;
            Thread reader = new Thread(() -> read(index, churn, readerSeed, done, failures), "reader-" + r);
            readers.add(reader);
            reader.start();
        }
        Random random = new Random(SEED);
        List<Folio> live = new ArrayList<>();
        int writes = Integer.getInteger("iomap.stress.ops", 100_000);
        try {
            for (int op = 0; op < writes && failures.isEmpty(); op++) {
                if (live.size() < 16 && random.nextInt(3) != 0) {
                    int order = randomOrder(random);
                    long at = (churn[random.nextInt(churn.length)] + random.nextLong(1L << 13)) & -(1L << order);
                    Folio folio = folio(at, order);
                    boolean free = last(folio) < stableSmall.index() || at > last(stableLarge);
                    for (Folio other : live) {
                        free &= last(folio) < other.index() || at > last(other);
                    }
                    if (free) {
                        index.insert(folio);
                        live.add(folio);
                        if (random.nextBoolean()) {
                            index.setMark(random.nextInt(2), at);
                        }
                    }
                } else if (!live.isEmpty()) {
                    Folio victim = live.remove(random.nextInt(live.size()));
                    index.clearMark(FolioIndex.DIRTY, victim.index());
                    index.clearMark(FolioIndex.WRITEBACK, victim.index());
                    index.remove(victim);
                }
            }
        } finally {
            done.set(true);
            for (Thread reader : readers) {
                reader.join(60_000);
            }
        }
        assertThat(failures).isEmpty();
        assertThat(index.get(3)).isSameAs(stableSmall);
    }

    private static void read(FolioIndex index, long[] churn, long seed, AtomicBoolean done,
            ConcurrentLinkedQueue<String> failures) {
        Random random = new Random(seed);
        List<Folio> walked = new ArrayList<>();
        while (!done.get() && failures.isEmpty()) {
            long at = random.nextInt(4) == 0 ? random.nextLong(8192)
                    : churn[random.nextInt(churn.length)] + random.nextLong(1L << 13);
            Folio folio = index.get(at);
            if (folio != null && (at < folio.index() || at > last(folio))) {
                failures.add("get(" + at + ") returned " + folio);
            }
            Folio next = index.findFrom(at);
            if (next != null && last(next) < at) {
                failures.add("findFrom(" + at + ") returned " + next);
            }
            long stable = 4096L + random.nextInt(512);
            if (index.get(3) == null || index.get(stable) == null || index.get(stable).index() != 4096) {
                failures.add("a stable folio went missing at " + stable);
            }
            if (index.nextMarked(FolioIndex.WRITEBACK, 0, 3) != 3
                    || index.nextMarked(FolioIndex.DIRTY, 4, 4096) != 4096) {
                failures.add("a stable mark went missing");
            }
            if (random.nextInt(16) == 0) {
                walked.clear();
                index.collect(0, Long.MAX_VALUE, walked);
                long previous = -1;
                for (Folio f : walked) {
                    if (f.index() <= previous) {
                        failures.add("collect out of order: " + walked);
                        break;
                    }
                    previous = last(f);
                }
                if (walked.stream().noneMatch(f -> f.index() == 3)
                        || walked.stream().noneMatch(f -> f.index() == 4096)) {
                    failures.add("collect missed a stable folio: " + walked);
                }
            }
        }
    }
}
