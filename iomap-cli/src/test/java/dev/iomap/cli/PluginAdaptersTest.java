package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.cli.plugins.ThirdPartyPlugin;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A third party's adapter joins the CLI as a plugin jar: {@code bin/iomap} puts every jar of the plugins
 * directory ({@code IOMAP_PLUGINS}) and every entry of {@code IOMAP_CLASSPATH} on the class path, where
 * ServiceLoader finds the plugin's {@code AdapterPlugin}; {@code iomap adapters} lists its adapter,
 * {@code mkfs} formats with it and {@code fsck} recognises its image. The CLI runs from this module's class
 * path less its test classes ({@code IOMAP_CLI_CLASSPATH}), so the plugin's classes come from the jar the
 * test packs ({@link ThirdPartyPlugin} and its services file) and from nowhere else.
 */
class PluginAdaptersTest {
    private static final int WAIT_SECONDS = 120;

    @TempDir
    Path dir;

    private Path plugins;
    private Path empty;

    /** What one run of {@code bin/iomap} printed, standard error after standard output. */
    private record Run(int status, String output) {
    }

    @BeforeEach
    void packThePlugin() throws IOException, URISyntaxException {
        plugins = Files.createDirectories(dir.resolve("plugins"));
        empty = Files.createDirectories(dir.resolve("no-plugins"));
        Path classes = Path.of(ThirdPartyPlugin.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        String packageDir = ThirdPartyPlugin.class.getPackageName().replace('.', '/');
        try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(plugins.resolve("third-party.jar")));
                Stream<Path> files = Files.list(classes.resolve(packageDir))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
                add(jar, packageDir + "/" + file.getFileName(), Files.readAllBytes(file));
            }
            add(jar, "META-INF/services/dev.iomap.spi.AdapterPlugin",
                    (ThirdPartyPlugin.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void add(JarOutputStream jar, String name, byte[] bytes) throws IOException {
        jar.putNextEntry(new JarEntry(name));
        jar.write(bytes);
        jar.closeEntry();
    }

    @Test
    void aJarInThePluginsDirectoryIsListedFormattedWithAndChecked() throws Exception {
        Run adapters = iomap(plugins, null, "adapters");
        assertThat(adapters.status()).as(adapters.output()).isZero();
        assertThat(adapters.output()).contains(ThirdPartyPlugin.NAME + " (block device): snapfs from a plugin jar"
                + " (CLI tests)", "xfs-like (block device)");

        Path image = dir.resolve("plugin.img");
        Run mkfs = iomap(plugins, null, "mkfs", "--adapter=" + ThirdPartyPlugin.NAME, "--size=16m", image.toString());
        assertThat(mkfs.status()).as(mkfs.output()).isZero();
        Run fsck = iomap(plugins, null, "fsck", image.toString());
        assertThat(fsck.status()).as(fsck.output()).isZero();
        assertThat(fsck.output().lines().findFirst().orElse("")).as("fsck's first line, found by probing")
                .contains(ThirdPartyPlugin.NAME);
    }

    @Test
    void withoutThePluginTheAdapterIsUnknown() throws Exception {
        Run adapters = iomap(empty, null, "adapters");
        assertThat(adapters.status()).as(adapters.output()).isZero();
        assertThat(adapters.output()).contains("xfs-like").doesNotContain(ThirdPartyPlugin.NAME);
        Run mkfs = iomap(empty, null, "mkfs", "--adapter=" + ThirdPartyPlugin.NAME, "--size=16m",
                dir.resolve("none.img").toString());
        assertThat(mkfs.status()).isNotZero();
        assertThat(mkfs.output()).contains("no adapter named '" + ThirdPartyPlugin.NAME + "'");
    }

    @Test
    void iomapClasspathAddsAPluginToo() throws Exception {
        Run adapters = iomap(empty, plugins.resolve("third-party.jar").toString(), "adapters");
        assertThat(adapters.status()).as(adapters.output()).isZero();
        assertThat(adapters.output()).contains(ThirdPartyPlugin.NAME + " (block device)");
    }

    @Test
    void aPluginsDirectoryThatIsNoDirectoryIsRefused() throws Exception {
        Run adapters = iomap(dir.resolve("missing"), null, "adapters");
        assertThat(adapters.status()).isEqualTo(1);
        assertThat(adapters.output()).contains("IOMAP_PLUGINS=" + dir.resolve("missing") + " is not a directory");
    }

    /**
     * Runs {@code bin/iomap ARGS} to its end.
     *
     * @param pluginsDir IOMAP_PLUGINS
     * @param classpath IOMAP_CLASSPATH, or null for none
     */
    private Run iomap(Path pluginsDir, String classpath, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of("").toAbsolutePath().getParent().resolve("bin/iomap").toString());
        command.addAll(Arrays.asList(args));
        Path out = dir.resolve("command.out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile());
        Map<String, String> env = builder.environment();
        env.put("IOMAP_CLI_CLASSPATH", cliClassPath());
        env.put("IOMAP_JAVA_HOME", Path.of(System.getProperty("java.home")).toString());
        env.put("IOMAP_PLUGINS", pluginsDir.toString());
        env.remove("IOMAP_CLASSPATH");
        if (classpath != null) {
            env.put("IOMAP_CLASSPATH", classpath);
        }
        Process process = builder.start();
        process.getOutputStream().close();
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(command + " did not return: " + Files.readString(out));
        }
        return new Run(process.exitValue(), Files.readString(out));
    }

    /** @return this module's test class path without its test classes (where the plugin's classes are) */
    private static String cliClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !Path.of(entry).endsWith("test-classes"))
                .collect(Collectors.joining(File.pathSeparator));
    }
}
