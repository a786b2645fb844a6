package dev.iomap.testbed;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The fencing probe: a minimal NBD client (fixed newstyle handshake, {@code NBD_OPT_EXPORT_NAME}, one
 * {@code NBD_CMD_WRITE}) run from a node's host, standing for a write that host sends late. Modes:
 *
 * <ul>
 *   <li>{@code hold OFFSET TRIGGER RESULT}: connects, writes {@code connected} to RESULT, waits until the
 *       file TRIGGER exists, then writes a 4 KiB marker at OFFSET on the connection it opened before and
 *       writes to RESULT {@code acked} (the server said the write was done) or {@code refused: WHY};</li>
 *   <li>{@code write OFFSET}: connects and writes the marker at once, printing {@code acked} or
 *       {@code refused: WHY} (a new connection from a fenced host).</li>
 * </ul>
 *
 * <p>Whether the marker landed is read from the export's file, not from the probe ({@link #MARKER}).
 */
public final class NbdProbe {
    /** The marker's byte, repeated 4096 times. */
    public static final byte MARKER = 0x5a;
    private static final long IHAVEOPT = 0x49484156454F5054L;
    private static final int REQUEST_MAGIC = 0x25609513;
    private static final int REPLY_MAGIC = 0x67446698;

    private NbdProbe() {
    }

    /**
     * @param args {@code HOST PORT EXPORT hold OFFSET TRIGGER RESULT} or {@code HOST PORT EXPORT write OFFSET}
     * @throws Exception if the arguments are wrong
     */
    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String export = args[2];
        long offset = Long.parseLong(args[4]);
        if (args[3].equals("hold")) {
            Path trigger = Path.of(args[5]);
            Path result = Path.of(args[6]);
            try (Socket socket = connect(host, port, export)) {
                Files.writeString(result, "connected\n");
                while (!Files.exists(trigger)) {
                    Thread.sleep(20);
                }
                Files.writeString(result, write(socket, offset) + "\n");
            } catch (IOException e) {
                Files.writeString(result, "refused: " + e + "\n");
            }
        } else {
            try (Socket socket = connect(host, port, export)) {
                System.out.println(write(socket, offset));
            } catch (IOException e) {
                System.out.println("refused: " + e);
            }
        }
    }

    private static Socket connect(String host, int port, String export) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), 5000);
            socket.setSoTimeout(10_000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            byte[] greeting = new byte[16];
            in.readFully(greeting);
            if (!new String(greeting, 0, 8, StandardCharsets.US_ASCII).equals("NBDMAGIC")) {
                throw new IOException("not an NBD server");
            }
            int flags = in.readUnsignedShort();
            out.writeInt(flags & 3);   // fixed newstyle, and no zeroes if the server offers it
            byte[] name = export.getBytes(StandardCharsets.UTF_8);
            out.writeLong(IHAVEOPT);
            out.writeInt(1);   // NBD_OPT_EXPORT_NAME
            out.writeInt(name.length);
            out.write(name);
            out.flush();
            in.readLong();   // export size
            in.readUnsignedShort();   // transmission flags
            if ((flags & 2) == 0) {
                in.readFully(new byte[124]);
            }
            return socket;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    private static String write(Socket socket, long offset) {
        try {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] data = new byte[4096];
            Arrays.fill(data, MARKER);
            out.writeInt(REQUEST_MAGIC);
            out.writeShort(0);
            out.writeShort(1);   // NBD_CMD_WRITE
            out.writeLong(0x1234);
            out.writeLong(offset);
            out.writeInt(data.length);
            out.write(data);
            out.flush();
            int magic = in.readInt();
            int error = in.readInt();
            in.readLong();
            if (magic != REPLY_MAGIC || error != 0) {
                return "refused: reply magic " + Integer.toHexString(magic) + ", error " + error;
            }
            return "acked";
        } catch (IOException e) {
            return "refused: " + e;
        }
    }
}
