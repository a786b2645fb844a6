package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.Test;

/** The node table: node ids, lookup counts, names and paths. */
class NodesTest {
    final Nodes nodes = new Nodes(128);

    @Test
    void theRootsInodeNumberAndOneTradePlaces() {
        assertThat(nodes.nodeid(128)).isEqualTo(Nodes.ROOT);
        assertThat(nodes.nodeid(1)).isEqualTo(128);
        assertThat(nodes.nodeid(77)).isEqualTo(77);
        assertThat(nodes.ino(nodes.nodeid(1))).isEqualTo(1);
        assertThat(nodes.ino(Nodes.ROOT)).isEqualTo(128);
    }

    @Test
    void pathsAreBuiltFromNamesAndFollowRenames() throws Exception {
        nodes.lookedUp(10, 0, new Nodes.Name(Nodes.ROOT, "d"));
        nodes.lookedUp(11, 0, new Nodes.Name(10, "f"));
        assertThat(nodes.path(11)).isEqualTo("/d/f");
        assertThat(nodes.path(10, "g")).isEqualTo("/d/g");
        nodes.renamed(new Nodes.Name(Nodes.ROOT, "d"), new Nodes.Name(Nodes.ROOT, "e"), false);
        assertThat(nodes.path(11)).isEqualTo("/e/f");
        nodes.lookedUp(12, 0, new Nodes.Name(Nodes.ROOT, "x"));
        nodes.renamed(new Nodes.Name(10, "f"), new Nodes.Name(Nodes.ROOT, "x"), true);
        assertThat(nodes.path(11)).isEqualTo("/x");
        assertThat(nodes.path(12)).isEqualTo("/e/f");
    }

    @Test
    void aNodeIsForgottenWithItsLastLookupOnceNothingBelowItIsKnown() throws Exception {
        nodes.lookedUp(10, 0, new Nodes.Name(Nodes.ROOT, "d"));
        nodes.lookedUp(11, 0, new Nodes.Name(10, "f"));
        nodes.forget(10, 1);
        assertThat(nodes.path(11)).as("a child's parent stays").isEqualTo("/d/f");
        nodes.forget(11, 1);
        assertThat(nodes.size()).isOne();
        assertThatThrownBy(() -> nodes.path(10)).isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void aRemovedNameLeavesAnOpenNodeWithoutAPath() throws Exception {
        nodes.lookedUp(10, 0, new Nodes.Name(Nodes.ROOT, "a"));
        nodes.lookedUp(10, 0, new Nodes.Name(Nodes.ROOT, "b"));
        assertThat(nodes.lookups(10)).isEqualTo(2);
        nodes.removed(new Nodes.Name(Nodes.ROOT, "a"));
        assertThat(nodes.path(10)).isEqualTo("/b");
        nodes.removed(new Nodes.Name(Nodes.ROOT, "b"));
        assertThatThrownBy(() -> nodes.path(10)).isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("unlinked");
        assertThat(nodes.lookups(10)).isEqualTo(2);
    }

    @Test
    void aNameTakenByAnotherInodeMovesToIt() throws Exception {
        nodes.lookedUp(10, 5, new Nodes.Name(Nodes.ROOT, "a"));
        nodes.lookedUp(20, 6, new Nodes.Name(Nodes.ROOT, "a"));
        assertThat(nodes.path(20)).isEqualTo("/a");
        assertThatThrownBy(() -> nodes.path(10)).isInstanceOf(NoSuchFileException.class);
        assertThat(nodes.generation(20)).isEqualTo(6);
    }
}
