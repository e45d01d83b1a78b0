-- The benchmark tables and their rows, run in one transaction after CREATE SCHEMA and dropping
-- stale tables, by src/services/postgres/seed.rs (compiled in) and workloads/tests/pg_server.py.
CREATE TABLE asynclab.items (id integer PRIMARY KEY, name text NOT NULL, value integer NOT NULL);
INSERT INTO asynclab.items SELECT g, 'item-' || g, (g * 7919) % 100000 FROM generate_series(1, 100000) g;
CREATE TABLE asynclab.authors (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO asynclab.authors SELECT g, 'author-' || g FROM generate_series(1, 100) g;
CREATE TABLE asynclab.books (id integer PRIMARY KEY, author_id integer NOT NULL REFERENCES asynclab.authors(id), title text NOT NULL);
INSERT INTO asynclab.books SELECT g, ((g - 1) % 100) + 1, 'book-' || g FROM generate_series(1, 500) g;
CREATE INDEX books_author_id ON asynclab.books(author_id);
ANALYZE asynclab.items, asynclab.authors, asynclab.books;
