package dev.iomap.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CapabilityTest {

    @Test
    void directoriesAndExchangeImplyRenameAndCloneImpliesCopyOnWrite() {
        assertThat(Capability.withImplied(Set.of(Capability.DIRECTORIES)))
                .containsExactlyInAnyOrder(Capability.DIRECTORIES, Capability.RENAME);
        assertThat(Capability.withImplied(Set.of(Capability.RENAME_EXCHANGE)))
                .containsExactlyInAnyOrder(Capability.RENAME_EXCHANGE, Capability.RENAME);
        assertThat(Capability.withImplied(Set.of(Capability.CLONE)))
                .containsExactlyInAnyOrder(Capability.CLONE, Capability.COPY_ON_WRITE);
    }

    @Test
    void aFlatNamespaceCanRenameWithoutDirectoriesAndNothingIsAddedToNothing() {
        assertThat(Capability.withImplied(Set.of(Capability.RENAME))).containsExactly(Capability.RENAME);
        assertThat(Capability.withImplied(Set.of())).isEmpty();
        assertThat(Capability.withImplied(EnumSet.of(Capability.TRUNCATE, Capability.RANDOM_WRITE)))
                .containsExactlyInAnyOrder(Capability.TRUNCATE, Capability.RANDOM_WRITE);
    }
}
