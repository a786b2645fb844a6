package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.CreationException;
import com.google.inject.Guice;
import dev.iomap.spi.AdapterPlugin;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.core.TestAdapterPlugin.TestAdapter;
import java.util.List;
import org.junit.jupiter.api.Test;

class BootstrapTest {
    private final PageCacheOptions options = PageCacheOptions.builder().pageSize(16384).build();

    @Test
    void findsThePluginWithServiceLoader() throws Exception {
        IomapEngine engine = Bootstrap.start(options);

        assertThat(engine.adapters()).containsOnlyKeys(TestAdapterPlugin.NAME);
        FileSystemAdapter adapter = engine.adapter(TestAdapterPlugin.NAME);
        assertThat(adapter).isInstanceOf(TestAdapter.class);
        assertThat(adapter.name()).isEqualTo(TestAdapterPlugin.NAME);
        assertThat(adapter.description()).isEqualTo(TestAdapterPlugin.DESCRIPTION);
    }

    @Test
    void unknownAdapterNamesTheAvailableOnes() {
        IomapEngine engine = Bootstrap.start(options);

        assertThatThrownBy(() -> engine.adapter("nope"))
                .isExactlyInstanceOf(NotSupportedException.class)
                .hasMessageContaining("'nope'")
                .hasMessageContaining(TestAdapterPlugin.NAME);
    }

    @Test
    void bindsTheOptionsInstanceGiven() {
        IomapEngine engine = Bootstrap.start(options);

        assertThat(engine.options()).isSameAs(options);
        var injector = Guice.createInjector(Bootstrap.modules(options));
        assertThat(injector.getInstance(PageCacheOptions.class)).isSameAs(options);
    }

    @Test
    void engineIsASingleton() {
        var injector = Guice.createInjector(Bootstrap.modules(options));

        IomapEngine engine = injector.getInstance(IomapEngine.class);
        assertThat(injector.getInstance(IomapEngine.class)).isSameAs(engine);
    }

    @Test
    void twoAdaptersWithOneNameFailInjectorCreationNamingBothPlugins() {
        AdapterPlugin duplicate = () -> List.of(new TestAdapter(TestAdapterPlugin.NAME, "a second one"));

        assertThatThrownBy(() -> Bootstrap.start(options, List.of(duplicate)))
                .isExactlyInstanceOf(CreationException.class)
                .hasMessageContaining("two adapters are named '" + TestAdapterPlugin.NAME + "'")
                .hasMessageContaining(TestAdapterPlugin.class.getName());
    }

    @Test
    void anAdapterWithABlankNameIsRefused() {
        AdapterPlugin blank = () -> List.of(new TestAdapter(" ", "no name"));

        assertThatThrownBy(() -> Bootstrap.start(options, List.of(blank)))
                .isExactlyInstanceOf(CreationException.class)
                .hasMessageContaining("blank name");
    }

    @Test
    void anExtraPluginIsBoundUnderItsAdaptersName() throws Exception {
        AdapterPlugin extra = () -> List.of(new TestAdapter("extra", "embedded"));

        IomapEngine engine = Bootstrap.start(options, List.of(extra));

        assertThat(engine.adapters()).containsOnlyKeys(TestAdapterPlugin.NAME, "extra");
        assertThat(engine.adapter("extra").description()).isEqualTo("embedded");
    }

    @Test
    void theApplicationEntryPointBuildsItsRuntimeOnce() {
        assertThat(dev.iomap.api.IomapFileSystems.adapters()).contains(TestAdapterPlugin.NAME);
        int declared = TestAdapterPlugin.DECLARED.get();

        for (int i = 0; i < 3; i++) {
            assertThat(dev.iomap.api.IomapFileSystems.adapters()).contains(TestAdapterPlugin.NAME);
        }

        assertThat(TestAdapterPlugin.DECLARED.get()).isEqualTo(declared);
    }
}
