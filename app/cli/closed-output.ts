/**
 * `concord users list | head`: when the reader of the output closes the pipe, the next write fails with EPIPE. That
 * is the reader saying it has read enough, not a failure of the command, so the command stops at once and exits 0
 * without a stack trace (docs/security.md, "Command-line output"). Other output errors keep their message, one line.
 */
export function stopQuietlyWhenOutputCloses(stream: NodeJS.WriteStream, name: string): void {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    process.stderr.write(`concord: cannot write to ${name}: ${error.message}\n`);
    process.exit(2);
  });
}
