import Foundation
@testable import LatchkeyCrypto
import Testing

/// The client modules use FoundationEssentials only (corelibs Foundation brings ICU's data
/// with it: docs/PERFORMANCE.md, "The Debian package"). What replaced a corelibs call must
/// answer as that call did; these tests ask both.
@Suite("What replaced corelibs Foundation answers as it did")
struct WithoutCorelibsFoundationTests {
    /// Every scalar of the Basic Multilingual Plane around text, at both ends.
    @Test("trimming white space, spaces, line breaks: as trimmingCharacters(in:) for every BMP scalar")
    func trimming() {
        for value in UInt32(0)...0xFFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)\(scalar)a\(scalar)b\(scalar)"
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "U+\(String(value, radix: 16))")
            #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces), "U+\(String(value, radix: 16))")
            #expect(text.trimmingLineBreaks() == text.trimmingCharacters(in: .newlines), "U+\(String(value, radix: 16))")
        }
        #expect(" \t\r\n ".trimmingWhitespace() == "")
        #expect("".trimmingSpaces() == "")
        #expect(" a b ".dropFirst(0).trimmingWhitespace() == "a b")
    }

    @Test("a path's parent and a name without its extension: as NSString's")
    func paths() {
        for path in ["/a/b", "/a/b/", "/a", "/", "a/b", "/run/user/1000/latchkey/agent.sock", "//a//b", "/a/./b"] {
            #expect(PathText.parent(of: path) == (path as NSString).deletingLastPathComponent, "\(path)")
        }
        // NSString of corelibs Foundation stops the process on these two (swift 6.3).
        #expect(PathText.parent(of: "a") == "")
        #expect(PathText.parent(of: "") == "")
        for path in ["/run/agent.sock", "agent.sock", "/run/agent", "/a.b/c", "/run/x.tar.gz"] {
            #expect(PathText.removingExtension(of: path) == (path as NSString).deletingPathExtension, "\(path)")
        }
    }

    @Test("bounded reads stop at the limit; a link is refused when asked; a failed write is reported")
    func descriptors() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fdio-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("file")
        try Data(repeating: 7, count: 200_000).write(to: file)
        #expect(FileDescriptorIO.read(path: file.path, upTo: 100_001)?.count == 100_001)
        #expect(FileDescriptorIO.read(path: file.path, upTo: 1 << 20)?.count == 200_000)
        #expect(FileDescriptorIO.read(path: file.path, upTo: 0)?.count == 0)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(FileDescriptorIO.read(path: link.path, upTo: 10, followingLinks: false) == nil)
        #expect(FileDescriptorIO.read(path: link.path, upTo: 10)?.count == 10)
        #expect(FileDescriptorIO.read(path: folder.appendingPathComponent("missing").path, upTo: 10) == nil)

        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(FileDescriptorIO.write(ends[1], "über\n"))
        close(ends[1])
        #expect(FileDescriptorIO.read(ends[0], upTo: 100) == Data("über\n".utf8))
        close(ends[0])

        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        #expect(!FileDescriptorIO.write(full, Data(repeating: 1, count: 10)))
    }

    @Test("a detached thread runs its work, on a thread of its own, with a deep enough stack")
    func detachedThread() async {
        let caller = pthread_self()
        let ran: Bool = await withCheckedContinuation { continuation in
            let started = DetachedThread.start(stackSize: 256 * 1024) {
                // 64 KiB of the 256 on the stack: fine, where a default too small would fault.
                var frame = [UInt8](repeating: 0, count: 1)
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 * 1024) { buffer in
                    buffer.initialize(repeating: 1)
                    frame[0] = buffer[64 * 1024 - 1]
                }
                continuation.resume(returning: pthread_equal(pthread_self(), caller) == 0 && frame[0] == 1)
            }
            if !started { continuation.resume(returning: false) }
        }
        #expect(ran)
    }
}
