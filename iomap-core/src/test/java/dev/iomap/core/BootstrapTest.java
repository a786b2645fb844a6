package dev.iomap.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.AbstractModule;
import com.google.inject.CreationException;
import com.google.inject.Guice;
import com.google.inject.Module;
import com.google.inject.multibindings.MapBinder;
import dev.iomap.api.FilesystemAdapter;
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
        FilesystemAdapter adapter = engine.adapter(TestAdapterPlugin.NAME);
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
    void twoPluginsBindingOneNameFailInjectorCreation() {
        Module duplicate = new AbstractModule() {
            @Override
            protected void configure() {
                MapBinder.newMapBinder(binder(), String.class, FilesystemAdapter.class)
                        .addBinding(TestAdapterPlugin.NAME)
                        .toInstance(new TestAdapter(TestAdapterPlugin.NAME, "a second one"));
            }
        };

        assertThatThrownBy(() -> Bootstrap.start(options, List.of(duplicate)))
                .isExactlyInstanceOf(CreationException.class)
                .hasMessageContaining("Duplicate key \"" + TestAdapterPlugin.NAME + "\"");
    }
}
