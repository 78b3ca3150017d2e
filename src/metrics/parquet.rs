//! Parquet output tables (`output.format = "parquet"`): `flows.parquet`, `buffer.parquet`,
//! `throughput.parquet`, `sender_throughput.parquet` and `queues.parquet`, with the columns
//! of the CSV files of the same name, typed and Snappy-compressed.
//!
//! Column types: counts, node ids, ports and sizes in bytes are `INT64`; times (`*_ns`
//! columns) are `DOUBLE` nanoseconds, the value a CSV reader parses from the CSV's exact
//! decimal (a time below 2^53 ps — 104 days — is `ps / 1000` correctly rounded, so
//! `round(x * 1000)` gives the picoseconds back exactly); `slowdown` and `gbps` are `DOUBLE`.
//! `fct_ns` and `slowdown` are null for an unfinished flow (empty cells in the CSV).
//!
//! A [`ParquetTable`] streams its rows: it holds at most [`ROW_GROUP_ROWS`] rows in memory
//! and writes each full row group as it comes, through an [`AtomicWriter`] (a hidden temp
//! file renamed into place by [`ParquetTable::finish`]), so a table of any length is written
//! with bounded memory and a run killed midway leaves no truncated file.

use super::FlowRecord;
use super::output::AtomicWriter;
use parquet::basic::Compression;
use parquet::data_type::{DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Rows buffered per row group (at most 8 bytes per cell: 7 MB for the 14 columns of
/// `flows.parquet`).
pub const ROW_GROUP_ROWS: usize = 1 << 16;

/// The file format of a run's tables (`output.format`, `sfc run --format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// `flows.csv`, `buffer.csv`, `throughput.csv`, `queues.csv` (the default).
    #[default]
    Csv,
    /// `flows.parquet`, `buffer.parquet`, `throughput.parquet`, `queues.parquet`.
    Parquet,
}

impl OutputFormat {
    /// The format named `s` (`csv` or `parquet`).
    pub fn parse(s: &str) -> Option<OutputFormat> {
        match s {
            "csv" => Some(OutputFormat::Csv),
            "parquet" => Some(OutputFormat::Parquet),
            _ => None,
        }
    }

    /// The file extension of the tables: `csv` or `parquet`.
    pub fn extension(self) -> &'static str {
        match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Parquet => "parquet",
        }
    }
}

/// The type of a column of a [`ParquetTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    /// A 64-bit signed integer, never null.
    Int,
    /// A 64-bit float, never null.
    Float,
    /// A 64-bit float or null.
    OptFloat,
}

/// One column's values of the row group being filled.
enum Buf {
    Int(Vec<i64>),
    Float(Vec<f64>),
    /// Values of the non-null cells and the definition level of every cell (1 = present).
    OptFloat(Vec<f64>, Vec<i16>),
}

/// A Parquet file written row by row with bounded memory (see the module docs).
pub struct ParquetTable {
    writer: SerializedFileWriter<AtomicWriter>,
    cols: Vec<Buf>,
    rows: usize,
}

fn pq(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e)
}

impl ParquetTable {
    /// Start the table at `path` (atomically: nothing appears there before
    /// [`finish`](Self::finish)) with the given column names and types, in order.
    pub fn create(path: &Path, columns: &[(&str, ColumnKind)]) -> io::Result<ParquetTable> {
        use parquet::basic::{Repetition, Type as Physical};
        let fields = columns
            .iter()
            .map(|&(name, kind)| {
                let (physical, rep) = match kind {
                    ColumnKind::Int => (Physical::INT64, Repetition::REQUIRED),
                    ColumnKind::Float => (Physical::DOUBLE, Repetition::REQUIRED),
                    ColumnKind::OptFloat => (Physical::DOUBLE, Repetition::OPTIONAL),
                };
                Type::primitive_type_builder(name, physical)
                    .with_repetition(rep)
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(pq)?;
        let schema = Type::group_type_builder("schema")
            .with_fields(fields)
            .build()
            .map_err(pq)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("sfc {}", env!("CARGO_PKG_VERSION")))
            .build();
        let out = AtomicWriter::create(path)?;
        let writer =
            SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props)).map_err(pq)?;
        let cols = columns
            .iter()
            .map(|&(_, kind)| match kind {
                ColumnKind::Int => Buf::Int(Vec::new()),
                ColumnKind::Float => Buf::Float(Vec::new()),
                ColumnKind::OptFloat => Buf::OptFloat(Vec::new(), Vec::new()),
            })
            .collect();
        Ok(ParquetTable {
            writer,
            cols,
            rows: 0,
        })
    }

    /// Set integer column `col` of the current row.
    pub fn int(&mut self, col: usize, v: i64) {
        if let Some(Buf::Int(b)) = self.cols.get_mut(col) {
            b.push(v);
        }
    }

    /// Set float column `col` of the current row.
    pub fn float(&mut self, col: usize, v: f64) {
        if let Some(Buf::Float(b)) = self.cols.get_mut(col) {
            b.push(v);
        }
    }

    /// Set nullable float column `col` of the current row (`None`: null).
    pub fn opt_float(&mut self, col: usize, v: Option<f64>) {
        if let Some(Buf::OptFloat(b, d)) = self.cols.get_mut(col) {
            d.push(i16::from(v.is_some()));
            b.extend(v);
        }
    }

    /// End the current row (every column set once); a full row group is written out.
    pub fn end_row(&mut self) -> io::Result<()> {
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS {
            self.flush_group()?;
        }
        Ok(())
    }

    /// Write the buffered rows as one row group.
    fn flush_group(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut rg = self.writer.next_row_group().map_err(pq)?;
        let mut cols = self.cols.iter_mut();
        while let Some(mut c) = rg.next_column().map_err(pq)? {
            let Some(buf) = cols.next() else {
                return Err(io::Error::other("parquet: more columns than buffers"));
            };
            let n = match buf {
                Buf::Int(b) => {
                    c.typed::<Int64Type>()
                        .write_batch(b, None, None)
                        .map_err(pq)?;
                    std::mem::take(b).len()
                }
                Buf::Float(b) => {
                    c.typed::<DoubleType>()
                        .write_batch(b, None, None)
                        .map_err(pq)?;
                    std::mem::take(b).len()
                }
                Buf::OptFloat(b, d) => {
                    c.typed::<DoubleType>()
                        .write_batch(b, Some(d), None)
                        .map_err(pq)?;
                    b.clear();
                    std::mem::take(d).len()
                }
            };
            if n != self.rows {
                return Err(io::Error::other(format!(
                    "parquet: a column has {n} values in a row group of {} rows",
                    self.rows
                )));
            }
            c.close().map_err(pq)?;
        }
        rg.close().map_err(pq)?;
        self.rows = 0;
        Ok(())
    }

    /// Write the last row group and the footer, then move the file into place.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush_group()?;
        self.writer.into_inner().map_err(pq)?.finish()
    }
}

/// Nanoseconds as the `DOUBLE` of a `*_ns` column (see the module docs).
#[inline]
pub fn ns(ps: u64) -> f64 {
    ps as f64 / 1000.0
}

/// Column names of `flows.parquet` (those of `flows.csv`).
const FLOW_COLUMNS: &[(&str, ColumnKind)] = &[
    ("id", ColumnKind::Int),
    ("src", ColumnKind::Int),
    ("dst", ColumnKind::Int),
    ("sport", ColumnKind::Int),
    ("dport", ColumnKind::Int),
    ("size_bytes", ColumnKind::Int),
    ("start_ns", ColumnKind::Float),
    ("fct_ns", ColumnKind::OptFloat),
    ("ideal_fct_ns", ColumnKind::Float),
    ("slowdown", ColumnKind::OptFloat),
    ("retx_packets", ColumnKind::Int),
    ("pauses", ColumnKind::Int),
    ("paused_ns", ColumnKind::Float),
    ("completed", ColumnKind::Int),
];

/// Write `flows.parquet` (the rows of [`super::output::flows_csv`], typed) to `path`,
/// streaming and atomically.
pub fn write_flows_parquet<R: std::borrow::Borrow<FlowRecord>>(
    path: &Path,
    records: impl IntoIterator<Item = R>,
) -> io::Result<()> {
    let mut t = ParquetTable::create(path, FLOW_COLUMNS)?;
    for r in records {
        let r = r.borrow();
        let done = r.fct_ps.zip(r.slowdown());
        t.int(0, i64::from(r.id));
        t.int(1, i64::from(r.src));
        t.int(2, i64::from(r.dst));
        t.int(3, i64::from(r.sport));
        t.int(4, i64::from(r.dport));
        t.int(5, r.size_bytes as i64);
        t.float(6, ns(r.start_ps));
        t.opt_float(7, done.map(|(f, _)| ns(f)));
        t.float(8, ns(r.ideal_fct_ps));
        t.opt_float(9, done.map(|(_, s)| s));
        t.int(10, r.retx_packets as i64);
        t.int(11, i64::from(r.pauses));
        t.float(12, ns(r.paused_ps));
        t.int(13, i64::from(r.fct_ps.is_some()));
        t.end_row()?;
    }
    t.finish()
}
