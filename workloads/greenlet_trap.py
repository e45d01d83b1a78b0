"""Correctness study, not a timing: lazy loads in async SQLAlchemy (MissingGreenlet) and the fixes.

One variant, `cases`, runs each case against the seeded authors/books and reports a row
`{"case", "expected", "observed", "ok"}` in `extra["rows"]`; `observed` is built from what really
happened (the exception's class name and message, or the book ids loaded), never copied from
`expected`. `ops` counts the cases that behaved as expected, `errors` those that did not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import ForeignKey, create_engine, select
from sqlalchemy.exc import InvalidRequestError, MissingGreenlet
from sqlalchemy.ext.asyncio import AsyncAttrs, AsyncSession, create_async_engine
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    joinedload,
    mapped_column,
    relationship,
    selectinload,
)

import dbutil
import harness

PARAMS = {"author_id": 1, "timeout_s": 30.0, "loop": "asyncio"}

BOOKS_PER_AUTHOR, AUTHORS = 5, 100  # the seed: book g belongs to author ((g - 1) % 100) + 1


def expected_book_ids(author_id: int) -> list[int]:
    """The seed's books of `author_id` (500 books dealt round-robin to 100 authors)."""
    return [author_id + AUTHORS * k for k in range(BOOKS_PER_AUTHOR)]


def mapped_tables(books_lazy: str):
    """Author and Book mapped on a registry of their own, `Author.books` loading `books_lazy`."""

    class Base(AsyncAttrs, DeclarativeBase):
        pass

    class Author(Base):
        __tablename__ = "authors"
        __table_args__ = {"schema": "asynclab"}
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str]
        books: Mapped[list[Book]] = relationship(back_populates="author", lazy=books_lazy)

    class Book(Base):
        __tablename__ = "books"
        __table_args__ = {"schema": "asynclab"}
        id: Mapped[int] = mapped_column(primary_key=True)
        author_id: Mapped[int] = mapped_column(ForeignKey("asynclab.authors.id"))
        title: Mapped[str]
        author: Mapped[Author] = relationship(back_populates="books")

    return Author, Book


# The default mapping: `books` lazy-loads on first access (lazy="select"), the classic trap.
Author, Book = mapped_tables("select")
# The same tables mapped with lazy="raise": an unloaded relationship fails loudly, sync or async.
StrictAuthor, _ = mapped_tables("raise")


def raised(exc: BaseException) -> str:
    """Observed text for an exception: its real class name and first message line."""
    return f"raises {harness.describe_error(exc)}"


def loaded(books) -> str:
    ids = sorted(book.id for book in books)
    return f"{len(ids)} books, ids {','.join(map(str, ids))}"


class Cases(harness.Scenario):
    """The operation: case `index`, a coroutine returning (observed text, ok); its payload is the
    case's row, and a case that did not behave as expected fails (its row kept)."""

    def __init__(self, params: dict, services: dict) -> None:
        super().__init__(params, services)
        self.author_id = int(params["author_id"])
        ids = expected_book_ids(self.author_id)
        self.books_text = f"{len(ids)} books, ids {','.join(map(str, ids))}"
        self.urls, self.timeout = dbutil.urls(services["database_url"]), params["timeout_s"]
        books = self.books_text
        self.cases: list[tuple[str, str, Callable[[], Awaitable[tuple[str, bool]]]]] = [
            ("lazy_load_in_async", "raises MissingGreenlet", self.lazy_load_in_async),
            ("selectinload", books, self.selectin),
            ("joinedload", books, self.joined),
            ("awaitable_attrs", books, self.awaitable_attrs),
            ("lazy_raise", "raises InvalidRequestError mentioning lazy='raise'", self.lazy_raise),
            ("lazy_load_in_sync", books, self.lazy_load_in_sync),
        ]
        self.count = len(self.cases)

    async def open(self, part: int = 0, parts: int = 1) -> None:
        """Both engines, connected and their statements compiled outside the run."""
        self.engine = create_async_engine(
            self.urls.sqlalchemy_async, pool_size=1, max_overflow=0, pool_timeout=self.timeout
        )
        self.sync_engine = create_engine(
            self.urls.sqlalchemy_sync, pool_size=1, max_overflow=0, pool_timeout=self.timeout
        )
        async with AsyncSession(self.engine) as session:
            await session.get(Author, self.author_id)
            await session.get(StrictAuthor, self.author_id)
        with Session(self.sync_engine) as session:
            session.get(Author, self.author_id)

    async def op(self, index: int) -> dict:
        case, expected, check = self.cases[index]
        try:
            observed, ok = await check()
        except Exception as exc:  # noqa: BLE001 - an unexpected failure is a failed case
            observed, ok = f"unexpected {raised(exc)}", False
        row = {"case": case, "expected": expected, "observed": observed, "ok": ok}
        if not ok:
            raise harness.Failed(f"{case}: expected {expected}, observed {observed}", row)
        return row

    def extra(self, payloads: list, model: harness.Model) -> dict:
        return {"rows": payloads, "cases": len(payloads)}

    def books_ok(self, observed: str) -> tuple[str, bool]:
        return observed, observed == self.books_text

    async def lazy_load_in_async(self) -> tuple[str, bool]:
        """(a) `author.books` after `await session.get(...)`: the implicit IO has no greenlet."""
        async with AsyncSession(self.engine) as session:
            author = await session.get(Author, self.author_id)
            try:
                books = author.books
            except Exception as exc:  # noqa: BLE001 - the exception is the observation
                return raised(exc), isinstance(exc, MissingGreenlet)
            return f"no exception; {loaded(books)}", False

    async def selectin(self) -> tuple[str, bool]:
        """(b) eager loading with a second SELECT ... WHERE author_id IN (...)."""
        stmt = select(Author).where(Author.id == self.author_id)
        async with AsyncSession(self.engine) as session:
            result = await session.execute(stmt.options(selectinload(Author.books)))
            return self.books_ok(loaded(result.scalars().one().books))

    async def joined(self) -> tuple[str, bool]:
        """(c) eager loading with a LEFT OUTER JOIN; `.unique()` collapses the joined rows."""
        stmt = select(Author).where(Author.id == self.author_id)
        async with AsyncSession(self.engine) as session:
            result = await session.execute(stmt.options(joinedload(Author.books)))
            return self.books_ok(loaded(result.unique().scalars().one().books))

    async def awaitable_attrs(self) -> tuple[str, bool]:
        """(d) the lazy load made explicit: `await author.awaitable_attrs.books`."""
        async with AsyncSession(self.engine) as session:
            author = await session.get(Author, self.author_id)
            return self.books_ok(loaded(await author.awaitable_attrs.books))

    async def lazy_raise(self) -> tuple[str, bool]:
        """(e) lazy="raise": the access fails loudly and early, with a message saying why."""
        async with AsyncSession(self.engine) as session:
            author = await session.get(StrictAuthor, self.author_id)
            try:
                books = author.books
            except Exception as exc:  # noqa: BLE001
                ok = type(exc) is InvalidRequestError and "lazy='raise'" in str(exc)
                return raised(exc), ok
            return f"no exception; {loaded(books)}", False

    async def lazy_load_in_sync(self) -> tuple[str, bool]:
        """(f) control: the same lazy access in sync SQLAlchemy just runs a second SELECT."""
        with Session(self.sync_engine) as session:
            author = session.get(Author, self.author_id)
            return self.books_ok(loaded(author.books))

    async def close(self) -> None:
        try:
            await self.engine.dispose()
        finally:
            self.sync_engine.dispose()


VARIANTS = {"cases": harness.EventLoop.of(Cases)}
