package dev.iomap.devices.nbd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.NotSupportedException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Parsing and printing {@code nbd://} addresses. */
class NbdExportTest {

    @Test
    void hostPortAndExport() throws Exception {
        NbdExport export = NbdExport.parse("nbd://127.0.0.1:10900/disk");

        assertThat(export).isEqualTo(NbdExport.of("127.0.0.1", 10900, "disk"));
        assertThat(export).hasToString("nbd://127.0.0.1:10900/disk");
    }

    @Test
    void theDefaultPortAndTheDefaultExport() throws Exception {
        assertThat(NbdExport.parse("nbd://storage")).isEqualTo(NbdExport.of("storage", 10809, ""));
        assertThat(NbdExport.parse("NBD://storage/")).isEqualTo(NbdExport.of("storage", 10809, ""));
    }

    @Test
    void anIpv6AddressAndAPercentEncodedName() throws Exception {
        NbdExport export = NbdExport.parse("nbd://[::1]:10809/my%20disk%2Fone");

        assertThat(export.host()).isEqualTo("::1");
        assertThat(export.name()).isEqualTo("my disk/one");
        assertThat(export).hasToString("nbd://[::1]:10809/my%20disk/one");
        assertThat(NbdExport.parse(export.toString()).name()).isEqualTo("my disk/one");
    }

    @Test
    void options() throws Exception {
        NbdExport export = NbdExport.parse("nbd://h/e?retry=5&timeout=250ms&fua=on");

        assertThat(export.options().reconnectWindow()).isEqualTo(Duration.ofSeconds(5));
        assertThat(export.options().replyTimeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(export.options().forceUnitAccess()).isTrue();
        assertThat(export).hasToString("nbd://h:10809/e?retry=5000ms&timeout=250ms&fua=on");
        assertThat(NbdExport.parse(export.toString())).isEqualTo(export);
        assertThat(NbdExport.parse("nbd://h/e?retry=0").options().reconnectWindow()).isZero();
    }

    @Test
    void recognisesNbdAddressesOnly() throws Exception {
        assertThat(NbdExport.isNbd("nbd://h/e")).isTrue();
        assertThat(NbdExport.isNbd("NBDS://h/e")).isTrue();
        assertThat(NbdExport.isNbd("nbd+unix:///e?socket=/s")).isTrue();
        assertThat(NbdExport.isNbd("/tmp/nbd://x")).isFalse();
        assertThat(NbdExport.isNbd("image.img")).isFalse();
    }

    @Test
    void refusesWhatItCannotUse() throws Exception {
        assertThatThrownBy(() -> NbdExport.parse("nbds://h/e")).isInstanceOf(NbdTlsException.class);
        assertThatThrownBy(() -> NbdExport.parse("nbd+unix:///e?socket=/run/nbd"))
                .isInstanceOf(NotSupportedException.class).hasMessageContaining("only NBD over TCP");
        assertThatThrownBy(() -> NbdExport.parse("nbd://h:99999/e"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NbdExport.parse("nbd:///e")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected nbd://HOST");
        assertThatThrownBy(() -> NbdExport.parse("nbd://h/e?speed=fast"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no option 'speed'");
        assertThatThrownBy(() -> NbdExport.parse("nbd://h/e?timeout=0"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout must be positive");
        assertThatThrownBy(() -> NbdExport.parse("nbd://h/e?retry=soon"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry=soon");
    }
}
