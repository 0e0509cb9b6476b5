"""What elopipe last wrote into an output folder, so that a publish writes only what changed.

`.elopipe-manifest.json` at the top of an output folder records, for every file elopipe wrote
there, its content digest (BLAKE2b, 128 bits, hex), size in bytes and modification time in
nanoseconds:

    {"version": 1, "files": {"lists/fide_2024-01-01.csv": ["9f…", 48213, 1733450000123456789], ...},
     "found": {"lists/fide_2023-12-01.csv": ["4e…", 47990, 1733000000000000000], ...},
     "inputs": {"report:fide:554": ["c3…", ["reports/fide/554_x.players.csv", ...]], ...}}

`found` records, the same way, the files elopipe found under a name it publishes holding the very
bytes it was about to write, and did not write itself (the user's copy of a list, or a folder
published before manifests were kept): they are left as they are, and stay the user's.

`inputs` records, for each page made of several files (a report, a player page, a list in its
formats), the digest of the stored rows it was made from (`elopipe.publish.inputs`) and its
files. A publish that finds the same digest, and each of those files as the manifest recorded
it, does not make the page again (`Manifest.fresh`): the files are the ones it would write.

While a manifest is `recording` a folder, every file written under it through
`elopipe.publish.atomic.write_bytes` (lists, reports, player pages, charts, indexes) is compared
with what is there: a file whose content is unchanged is not written again, so its inode and
modification time stay. A file counts as unchanged when its entry (in `files` or `found`) matches its
digest, size and modification time, or, when there is no entry or the file was touched since,
when its bytes on disk equal the new ones. Such a file is left as it is, but it is recorded in
`found`, never in `files`: only a file elopipe wrote itself, as it wrote it (same size and
modification time), is elopipe's. A folder published before manifests existed is thus published
again without rewriting a file, and its files stay the user's until elopipe writes them. Anything
else is written atomically, as before.

The manifest only saves work: a lost or stale entry makes elopipe compare the file's bytes, never
skip a changed file. It is written without flushing to disk, at the end of a publish and now and
then during a long one, and only when what it records changed; each file written in between is
in the folder's journal (`elopipe.publish.journal`), so that a publish killed before it saved
its manifest leaves no file of elopipe's that the next one takes for the user's. Files elopipe did not write are
never removed or overwritten. One that sits under a name elopipe publishes, with other bytes than
elopipe's, and that the manifest does not record as elopipe wrote it (the user's own file, one
found identical before, or elopipe's file edited by hand) is first kept under `.elopipe-kept/`
with the same relative name (a hard link, else a copy; `.1`, `.2`, ... when that name is taken),
then the name gets elopipe's content; `Manifest.set_aside` lists them for the user's message.
No file is written, kept or removed through a folder under the output folder that is a symbolic
link (`Manifest.real_folder`): it could lead anywhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from elopipe.publish.atomic import RECORDER, WriteError, write_unrecorded
from elopipe.publish.folders import link_between
from elopipe.publish.journal import JOURNAL, Entry, Journal, Page
from elopipe.publish.manifest_file import VERSION, foreign_manifest, inside, load_manifest
from elopipe.read.sources import OUTPUT_MARK

if TYPE_CHECKING:
    from elopipe.publish.gone_report import GoneLists

MANIFEST = OUTPUT_MARK  # `elopipe.read.sources` leaves a folder holding it out of every input
# where a file elopipe cannot show it wrote is kept before its name gets elopipe's content
KEPT = ".elopipe-kept"
# held while a publish writes into the folder (`recording`)
LOCK = ".elopipe-publish.lock"
# a long publish saves the manifest at most this often (it is a few hundred KB on a big folder)
SAVE_EVERY_SECONDS = 5.0


def digest(data: bytes) -> str:
    """The content digest the manifest records: BLAKE2b-128 of `data`, hex."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Manifest:
    """The manifest of one output folder (`root`), loaded from disk; thread-safe. `entries` holds
    the files elopipe wrote, `found` those it found holding what it was about to write and left
    as they were (module docstring), each rel -> (digest, size, mtime_ns). `written` and
    `kept` count the files written and the unchanged ones left as they were since it was loaded;
    `changed` holds the former (paths relative to the folder); `set_aside` the (name, kept as)
    pairs of the files that were not elopipe's and were kept before being replaced (module
    docstring), relative to the folder; `retired` the files removed with their page (`retire`);
    `gone_lists` per system the lists the folder held that the store no longer holds
    (`elopipe.publish.gone`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))
        self.entries, self.found, self.inputs, self._saved = load_manifest(self.root / MANIFEST)
        self.written = 0
        self.kept = 0
        self.changed: set[str] = set()
        self.set_aside: list[tuple[str, str]] = []
        self.retired: list[str] = []
        self.gone_lists: dict[str, GoneLists] = {}
        # False while a store publishes into a folder another store has published into too:
        # page ids are per store, so no file is removed (`made`, `retire`)
        self.removes = True
        self._lock = threading.Lock()
        self._dirty = False
        # folder -> the symbolic link between the output folder and it ("" for none), asked once
        self._links: dict[str, str] = {}
        # called once before the first file is written, kept aside or removed (`changing`)
        self.before_change: Callable[[], None] | None = None
        self._change_lock = threading.Lock()
        self._saved_at = time.monotonic()
        self._journal = Journal(self.root)
        self._adopt(self._journal.read())

    def relative(self, path: Path) -> str | None:
        """`path` relative to the folder, with '/' separators; None when it is outside."""
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.root)
        except ValueError:
            return None
        # the manifest itself and the ledger (elopipe.publish.plan) change on every publish
        return None if rel.name.startswith(".elopipe-") else rel.as_posix()

    def write(self, path: Path, data: bytes, rel: str, durable: bool = True) -> bool:
        """Write `data` to `path` (`rel` in the folder) unless the file already holds it; record
        it. Returns True when the file was written. Raises WriteError as `atomic.write_bytes`."""
        key = digest(data)
        self.real_folder(path)
        if self._unchanged(path, rel, key, data):
            with self._lock:
                self.kept += 1
            return False
        self.changing()
        self._keep_if_not_ours(path, rel)
        write_unrecorded(path, data, durable)
        st = path.stat()
        if self._journal_foreign:
            self._journal_aside()
        with self._lock:
            if not self._journal_foreign:
                self._journal.append((rel, key, st.st_size, st.st_mtime_ns))
            self.entries[rel] = (key, st.st_size, st.st_mtime_ns)
            self.found.pop(rel, None)
            self.changed.add(rel)
            self.written += 1
            self._dirty = True
        return True

    def _adopt(self, left: tuple[list[Entry], list[Page]] | None) -> None:
        """Take as elopipe's the files a publish that did not finish wrote (`journal`), each still
        as it wrote it, and the pages it made; `left` None: the file under the journal's name is
        the user's."""
        self._journal_foreign = left is None
        files, pages = left or ([], [])
        for rel, key, size, mtime in files:
            try:
                st = (self.root / rel).lstat()
            except OSError:
                continue
            if inside(rel) and stat.S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns) == (size, mtime):
                self.entries[rel] = (key, size, mtime)
                self.found.pop(rel, None)
        for key, digest, rels in pages:
            self.inputs[key] = (digest, [r for r in rels if inside(r)])
        if files or pages:
            self._dirty = True  # saved, then the journal is cleared (`save`)

    def _journal_aside(self) -> None:
        """Keep the user's file under the journal's name under `KEPT` before a journal is written
        there; when it cannot be kept, no journal is written."""
        try:
            self.keep_aside(JOURNAL)  # the journal is appended to: the user's file must leave the name
        except (WriteError, OSError):
            return
        with self._lock:
            self._journal_foreign = False

    def keep_aside(self, rel: str) -> None:
        """Keep the user's file at `rel` under `KEPT` (`_keep_if_not_ours`) and free its name for
        a file of elopipe's own (the ledger, the journal): kept as a hard link, the user's file
        would be changed with a file written in place there (the journal is appended to).
        Raises WriteError when it cannot be kept, OSError when the name cannot be freed."""
        path = self.root / rel
        self._keep_if_not_ours(path, rel)
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)

    def _unchanged(self, path: Path, rel: str, key: str, data: bytes) -> bool:
        try:  # lstat: a link is never read through (its target is a path the user did not name)
            st = path.lstat()
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode):
            return False
        now = (key, st.st_size, st.st_mtime_ns)
        with self._lock:
            if now in (self.entries.get(rel), self.found.get(rel)):
                return True
        if st.st_size != len(data):
            return False
        try:
            same = path.read_bytes() == data
        except OSError:
            return False
        if same:
            # left as it is, but not adopted: elopipe did not write it (the user's copy, a folder
            # published before manifests, elopipe's file touched since), so it is never removed,
            # and it is kept under KEPT before its name gets other bytes (`_keep_if_not_ours`)
            with self._lock:
                self.entries.pop(rel, None)
                self.found[rel] = now
                self._dirty = True
        return same

    def changing(self) -> None:
        """Call `before_change` (then cleared) before the folder's first change: a publish records
        its lists as being written (`elopipe.publish.plan`) only when it changes a file, so that
        one with nothing new leaves the folder as it was. The other threads' changes wait for it."""
        if self.before_change is None:
            return
        with self._change_lock:
            hook = self.before_change
            if hook is not None:
                hook()
                self.before_change = None

    def real_folder(self, path: Path) -> None:
        """Raise WriteError when a folder between the output folder and `path` is a symbolic
        link: a file is never written, kept or removed wherever a link leads (the commands refuse
        such a folder before they start: `elopipe.publish.folders`; this holds when one is made
        during the publish). Each folder is asked once."""
        folder = os.path.dirname(os.path.abspath(path))
        with self._lock:
            link = self._links.get(folder)
        if link is None:
            link = link_between(self.root, folder) or ""
            with self._lock:
                self._links[folder] = link
        if link:
            raise WriteError(f"cannot write {path}: {link} is a symbolic link; elopipe writes only into real folders")

    def _keep_if_not_ours(self, path: Path, rel: str) -> None:
        """Keep what is at `path` under `KEPT` (a file as it is; a link as a link, a FIFO: moved)
        unless the manifest records it as elopipe wrote it (same size and modification time); a
        folder is left where it is. Raises WriteError when it cannot be kept (`KEPT`, or a folder
        in it, a link or a file): elopipe then does not write over it."""
        try:
            st = path.lstat()
        except OSError:
            return
        with self._lock:
            entry = self.entries.get(rel)
        regular = stat.S_ISREG(st.st_mode)
        ours = regular and entry is not None and (entry[1], entry[2]) == (st.st_size, st.st_mtime_ns)
        if ours or stat.S_ISDIR(st.st_mode):  # a folder under the name: the write fails in one line
            return
        target = self.root / KEPT / rel
        try:
            kept_root = _real_folder(self.root / KEPT)
            known = target.parent
            while not os.path.lexists(known):  # what exists of the path is checked before a mkdir
                known = known.parent
            real = os.path.realpath(known)
            if real != kept_root and not real.startswith(kept_root + os.sep):
                raise OSError(0, f"{known} leads out of {self.root / KEPT}")
            target.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:  # two threads never pick the same free name
                n = 0
                while os.path.lexists(target):
                    n += 1
                    target = self.root / KEPT / f"{rel}.{n}"
                link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
                if link is not None and not os.path.isabs(link):
                    # a relative link moved as it is would point elsewhere from KEPT (and dangle):
                    # made again there to the same place, never followed, then taken from the name
                    os.symlink(os.path.relpath(os.path.join(path.parent, link), target.parent), target)
                    os.unlink(path)
                elif not regular:  # a link (kept as a link, never followed), a FIFO: moved aside
                    os.rename(path, target)
                else:
                    try:
                        os.link(path, target, follow_symlinks=False)
                    except OSError:  # a file system without hard links
                        shutil.copy2(path, target)
                self.set_aside.append((rel, target.relative_to(self.root).as_posix()))
        except OSError as exc:
            why = exc.strerror or str(exc)
            raise WriteError(f"{path}: not written by elopipe, and it could not be kept ({why})") from exc

    def fresh(self, key: str, digest: str, count: bool = True) -> list[Path] | None:
        """The files of page `key` when it was last made from inputs of `digest` and each of its
        files is as the manifest recorded it (same size and modification time); else None.
        `count`: the files count as kept by this publish (not for a page it only links)."""
        rels = self._fresh(key, digest)
        if rels is None:
            return None
        with self._lock:
            self.kept += len(rels) if count else 0
        return [self.root / rel for rel in rels]

    def is_fresh(self, key: str, digest: str) -> bool:
        """`fresh` as a yes or no, the files not counted as kept: for the pages a publish only
        checks (a folder's earlier reports, thousands of them on a federation's folder)."""
        return self._fresh(key, digest) is not None

    def _fresh(self, key: str, digest: str) -> list[str] | None:
        with self._lock:
            entry = self.inputs.get(key)
            if entry is None or entry[0] != digest:
                return None
            recorded = [(rel, self.entries.get(rel) or self.found.get(rel)) for rel in entry[1]]
        root = str(self.root)
        for rel, file in recorded:
            try:  # os.stat on a string: a pathlib.Path per file costs more than the stat
                st = os.stat(os.path.join(root, rel))
            except OSError:
                return None
            if file is None or (file[1], file[2]) != (st.st_size, st.st_mtime_ns):
                return None
        return [rel for rel, _ in recorded]

    def made(self, key: str, digest: str, paths: list[Path]) -> None:
        """Record that page `key`, made from inputs of `digest`, is the files `paths`. A file the
        page was made of before and is no longer (a chart now drawn in another format, a report
        under a tournament's new name) is removed when it is as elopipe wrote it (`stale`)."""
        rels = [r for r in (self.relative(p) for p in paths) if r is not None]
        with self._lock:
            before = self.inputs.get(key)
            self.inputs[key] = (digest, rels)
            if not self._journal_foreign:
                self._journal.append((key, digest, rels))
            self._dirty = True
        if before is not None and self.removes:
            self.stale(sorted(set(before[1]) - set(rels)))

    def retire(self, key: str) -> list[str]:
        """Forget page `key`, whose subject (an event, a player) the store no longer holds, and
        remove its files that are as elopipe wrote them (`stale`: a file edited since is left);
        the files removed are added to `retired` and returned."""
        if not self.removes:
            return []
        removed = self.stale(self.drop(key))
        with self._lock:
            self.retired.extend(removed)
        return removed

    def drop(self, key: str) -> list[str]:
        """Forget page `key`; return the files the manifest recorded for it (relative to the
        folder; none when it recorded no such page), for the caller to `stale` them."""
        with self._lock:
            entry = self.inputs.pop(key, None)
            self._dirty = True
        return [] if entry is None else list(entry[1])

    def stale(self, rels: list[str]) -> list[str]:
        """Remove the files `rels` (relative to the folder) that elopipe wrote and nobody changed
        since: the manifest records them with their size and modification time as they are now.
        Any other file, and a file another page still names, is left where it is; the entries of
        the files looked at are dropped. Returns the files removed."""
        removed = []
        for rel in rels:
            path = self.root / rel
            with self._lock:
                entry = self.entries.get(rel)
                named = any(rel in files for _, files in self.inputs.values())
                if named:
                    continue
                self.entries.pop(rel, None)
                self.found.pop(rel, None)  # never removed: elopipe did not write it
                self._dirty = True
            try:
                st = path.lstat()
            except OSError:
                continue
            ours = (
                entry is not None
                and link_between(self.root, os.path.dirname(path)) is None
                and stat.S_ISREG(st.st_mode)
                and (entry[1], entry[2]) == (st.st_size, st.st_mtime_ns)
                and _holds(path, entry[0])
            )
            if ours:
                self.changing()
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(rel)
        return removed

    def unfresh(self, rels: set[str]) -> None:
        """Make every page one of whose files is in `rels` (relative to the folder) not fresh
        (`fresh`), its files still its own: a page whose file was written by something else than
        its maker is made again by the next publish, never taken as it is."""
        with self._lock:
            for key, (_, files) in list(self.inputs.items()):
                if not rels.isdisjoint(files):
                    self.inputs[key] = ("", files)  # no digest matches: made again, still known
                    self._dirty = True

    def save(self, force: bool = True) -> None:
        """Write the manifest (not flushed to disk: a lost one only costs a comparison); without
        `force` only when `SAVE_EVERY_SECONDS` have passed since the last save; never when it
        would write what the file holds (a publish with nothing new leaves the folder as it was).
        A manifest that cannot be written is left as it was: it only saves work."""
        with self._lock:
            if not self._dirty or (not force and time.monotonic() - self._saved_at < SAVE_EVERY_SECONDS):
                return
            files = {k: list(v) for k, v in sorted(self.entries.items())}
            found = {k: list(v) for k, v in sorted(self.found.items())}
            inputs = {k: [v[0], list(v[1])] for k, v in sorted(self.inputs.items())}
            self._dirty = False
            self._saved_at = time.monotonic()
        data = {"version": VERSION, "files": files, **({"found": found} if found else {}), "inputs": inputs}
        text = json.dumps(data, separators=(",", ":"))
        if text == self._saved:
            self._journal.clear()
            return
        if self._saved is None and foreign_manifest(self.root / MANIFEST):
            # a file of the user's under the manifest's name (a link, a note): kept before the
            # manifest is saved over it, as any file of the user's under a name elopipe writes
            try:
                self._keep_if_not_ours(self.root / MANIFEST, MANIFEST)
            except OSError:  # not kept: not written over (a manifest only saves work)
                return
        with contextlib.suppress(OSError):
            write_unrecorded(self.root / MANIFEST, text.encode("utf-8"), durable=False)
            self._saved = text
            self._journal.clear()

    def close(self) -> None:
        """End the folder's journal (once saved: `recording`)."""
        self._journal.close()


def _holds(path: Path, key: str) -> bool:
    """Whether the file at `path` holds the bytes of digest `key` (read only before a removal)."""
    try:
        return digest(path.read_bytes()) == key
    except OSError:
        return False


def _real_folder(path: Path) -> str:
    """`path` made if missing, as a real path; OSError when it is a link or not a folder."""
    with contextlib.suppress(FileExistsError):
        path.mkdir()
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(0, f"{path} is not a folder (a link or a file): nothing is kept there")
    return os.path.realpath(path)


def active() -> Manifest | None:
    """The manifest recording in this context (None: files are written as they come)."""
    current = RECORDER.get()
    return current if isinstance(current, Manifest) else None


@contextlib.contextmanager
def recording(out_dir: str | os.PathLike[str]) -> Iterator[Manifest]:
    """Record the files written under `out_dir` in its manifest, and skip those whose content is
    unchanged (module docstring), until the block ends; the manifest is then saved (also when
    the block raises). Inside a block already recording the same folder, that manifest is used."""
    current = active()
    if current is not None and current.root == Path(os.path.abspath(out_dir)):
        yield current
        return
    with _folder_lock(Path(out_dir)):
        manifest = Manifest(Path(out_dir))
        token = RECORDER.set(manifest)
        try:
            yield manifest
        finally:
            RECORDER.reset(token)
            manifest.save()
            manifest.close()


def keep_users_file(root: Path, rel: str) -> None:
    """Keep the file of the user's at `rel` under output folder `root` in `KEPT` before elopipe
    writes a file of its own there (`Manifest.set_aside` of the publish writing into `root` says
    so; outside one, it is kept all the same). Raises WriteError when it cannot be kept."""
    current = active()
    manifest = current if current is not None and current.root == Path(os.path.abspath(root)) else Manifest(root)
    manifest.keep_aside(rel)


@contextlib.contextmanager
def protecting(out_dir: str | os.PathLike[str]) -> Iterator[Manifest]:
    """`recording` for a command that writes a few files into an output folder outside a publish
    (`player`, `report`, `publish --diff`): a file under a name it writes that elopipe did not
    write is kept first under `KEPT` (`Manifest.set_aside` says which), as a publish does. A page
    a publish made (`Manifest.made`) of which such a command changed a file (a player's page drawn
    with `--compare`) is no longer taken as fresh, so that the next publish makes it again."""
    with recording(out_dir) as manifest:
        try:
            yield manifest
        finally:
            manifest.unfresh(manifest.changed)


@contextlib.contextmanager
def _folder_lock(root: Path) -> Iterator[None]:
    """Hold `root`'s `LOCK` file (an advisory lock, gone with the process even after a kill): two
    publishes into one folder take turns, so that neither takes the other's files for the user's.
    A folder where the lock cannot be made is published without it (the writes then say why)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
