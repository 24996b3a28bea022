import CZlib
import Foundation

/// One table's archive of a prune: `TABLE-STAMP.jsonl.gz` in the archive folder, a JSON object per
/// line, gzip-compressed. Each batch is flushed and synced to disk before its rows are deleted, so
/// a crash leaves every deleted row in the file (and at worst a batch in it twice, never deleted:
/// the next prune archives it again — deduplicate on the key when reading). Used by one prune at a
/// time, under its owner's lock (`Pruner`).
final class JSONLinesArchive {
    /// The file's path.
    let path: String
    private let fd: Int32
    private let file: gzFile

    /// Creates the file (never replaces one). `stamp` names the prune (UTC, to the second).
    init(directory: String, table: RetainedTable, stamp: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw RetentionError.archive("the archive folder \(directory) does not exist: create it (writable by the poller's user) or leave prune_archive_dir unset")
        }
        path = (directory as NSString).appendingPathComponent("\(table.rawValue)-\(stamp).jsonl.gz")
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw RetentionError.archive("cannot create \(path): \(String(cString: strerror(errno)))") }
        guard let file = gzdopen(fd, "wb6") else {
            close(fd)
            throw RetentionError.archive("cannot start gzip output in \(path)")
        }
        self.file = file
    }

    /// Appends `rows` (JSON objects), then flushes the compressor and syncs the file.
    func append(_ rows: [String]) throws {
        var text = rows.joined(separator: "\n")
        text.append("\n")
        let written = text.withCString { gzwrite(file, $0, UInt32(text.utf8.count)) }
        guard written > 0, gzflush(file, Z_SYNC_FLUSH) == Z_OK, fsync(fd) == 0 else {
            throw RetentionError.archive("cannot write to \(path) (disk full?); nothing of this batch was deleted")
        }
    }

    /// Ends the gzip stream (its trailer) and closes the file.
    func finish() throws {
        guard gzclose(file) == Z_OK else { throw RetentionError.archive("cannot finish \(path)") }
    }
}
