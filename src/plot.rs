//! Figure rendering: line charts (optionally log-scaled), scatter plots, CDF step plots and
//! grouped bar charts, each written as a PNG (1000×650) and an SVG of the same layout.
//!
//! The experiment runner builds a [`Chart`] and calls [`render`]. Drawing uses `plotters`
//! without any system library: text is laid out with `ab_glyph` and the DejaVu Sans font
//! embedded from the `dejavu` crate (Bitstream Vera license; DejaVu changes public domain).
//! In the SVG, text stays text with `font-family="sans-serif"`.
//!
//! Data handling: points with NaN/infinite coordinates are skipped (they break a line into
//! separate pieces), as are non-positive values on a log axis. A chart without any drawable
//! point still renders, with a "no data" note. Axes are padded by 5 % of their span; log
//! axes get decade ticks (10ⁿ) with light grid lines at 2…9 × 10ⁿ.

use std::ffi::OsString;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use ab_glyph::{Font, FontRef, GlyphId, ScaleFont, point};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind};

/// Width of rendered figures, in pixels.
pub const WIDTH: u32 = 1000;
/// Height of rendered figures, in pixels.
pub const HEIGHT: u32 = 650;

/// Font family name under which the embedded font is registered (and that the SVG names).
const FONT: &str = "sans-serif";

/// What kind of chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChartKind {
    /// Poly-lines through the points of each series (in the given order), with markers.
    #[default]
    Line,
    /// Markers only.
    Scatter,
    /// Step plot of a cumulative distribution; points are `(value, cum_fraction)`.
    Cdf,
    /// Grouped bars: x = category index (see [`Chart::x_categories`]), one bar per series.
    Bar,
}

/// One named data series.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Data points `(x, y)`.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series named `name` with the given points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
        }
    }
}

/// A complete figure description.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chart {
    /// Title drawn above the plot (omitted when empty).
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// What kind of chart.
    pub kind: ChartKind,
    /// Logarithmic x axis (ignored when x is categorical).
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Category names for x = 0, 1, 2, …: the bar groups of a [`ChartKind::Bar`] chart, or
    /// tick labels of another kind whose x values are bin indices (e.g. flow-size bins).
    /// When non-empty, x is categorical and `log_x` is ignored.
    pub x_categories: Vec<String>,
    /// The data.
    pub series: Vec<Series>,
    /// Horizontal reference lines with labels, e.g. `("paper: 16 MB", 16.0)`.
    pub hlines: Vec<(String, f64)>,
}

impl Chart {
    /// An empty chart of `kind` with the given title and axis labels.
    pub fn new(
        kind: ChartKind,
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            kind,
            ..Self::default()
        }
    }

    /// Builder-style: sets the log flags.
    pub fn with_log(mut self, log_x: bool, log_y: bool) -> Self {
        self.log_x = log_x;
        self.log_y = log_y;
        self
    }

    /// Builder-style: appends a series.
    pub fn with_series(mut self, name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        self.series.push(Series::new(name, points));
        self
    }

    /// Builder-style: appends a labelled horizontal reference line.
    pub fn with_hline(mut self, label: impl Into<String>, y: f64) -> Self {
        self.hlines.push((label.into(), y));
        self
    }

    /// Builder-style: sets the x categories.
    pub fn with_categories<S: Into<String>>(mut self, cats: impl IntoIterator<Item = S>) -> Self {
        self.x_categories = cats.into_iter().map(Into::into).collect();
        self
    }
}

/// Render `chart` to `<stem>.png` (1000×650) and `<stem>.svg`; both written atomically
/// (write to a temp file in the same dir, then rename). Errors are Strings, never panics
/// (empty series, NaN/inf values skipped, non-positive values on log axes skipped,
/// all-empty → a chart with a "no data" note).
///
/// The extensions are appended to `stem` (`fig.v2` → `fig.v2.png`); missing parent
/// directories are created.
pub fn render(chart: &Chart, stem: &Path) -> Result<(), String> {
    let name = stem
        .file_name()
        .ok_or_else(|| format!("plot: output stem {} has no file name", stem.display()))?;
    let dir = match stem.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| format!("plot: creating {}: {e}", dir.display()))?;
    let out = |ext: &str| {
        let mut s: OsString = name.to_owned();
        s.push(".");
        s.push(ext);
        dir.join(s)
    };
    let tmp = |ext: &str| {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut s = OsString::from(".");
        s.push(name);
        // The temp name keeps the real extension last: the PNG encoder picks the format by it.
        s.push(format!(".tmp{}-{n}.{ext}", std::process::id()));
        dir.join(s)
    };

    let svg = render_svg(chart)?;
    let (png_tmp, png_out) = (tmp("png"), out("png"));
    let res = guarded(|| {
        let root = PngBackend(BitMapBackend::new(&png_tmp, (WIDTH, HEIGHT))).into_drawing_area();
        draw(&root, chart, true)?;
        root.present()
            .map_err(|e| format!("plot: writing PNG: {e}"))
    })
    .and_then(|()| rename(&png_tmp, &png_out));
    if let Err(e) = res {
        let _ = fs::remove_file(&png_tmp);
        return Err(e);
    }

    let (svg_tmp, svg_out) = (tmp("svg"), out("svg"));
    let res = fs::write(&svg_tmp, svg)
        .map_err(|e| format!("plot: writing {}: {e}", svg_tmp.display()))
        .and_then(|()| rename(&svg_tmp, &svg_out));
    if res.is_err() {
        let _ = fs::remove_file(&svg_tmp);
    }
    res
}

/// Render `chart` as an SVG document (the same picture [`render`] writes to `<stem>.svg`).
pub fn render_svg(chart: &Chart) -> Result<String, String> {
    let mut svg = String::new();
    guarded(|| {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, chart, false)?;
        root.present().map_err(|e| format!("plot: SVG: {e}"))
    })?;
    Ok(svg)
}

fn rename(from: &Path, to: &Path) -> Result<(), String> {
    fs::rename(from, to).map_err(|e| format!("plot: renaming to {}: {e}", to.display()))
}

/// Runs `f`, turning a panic inside the drawing library into an error.
fn guarded(f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(format!("plot: drawing failed: {msg}"))
    })
}

/// Registers the embedded font once per process.
fn ensure_font() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "plot: cannot load the embedded DejaVu Sans font".to_string())?;
        plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold())
            .map_err(|_| "plot: cannot load the embedded DejaVu Sans Bold font".to_string())
    })
    .clone()
}

// ---------------------------------------------------------------------------------------------
// Text on bitmaps

/// The embedded fonts parsed for direct rasterization: (regular, bold).
fn glyph_fonts() -> Option<&'static (FontRef<'static>, FontRef<'static>)> {
    static FONTS: OnceLock<Option<(FontRef<'static>, FontRef<'static>)>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let regular = FontRef::try_from_slice(dejavu::sans::regular()).ok()?;
            let bold = FontRef::try_from_slice(dejavu::sans::bold()).ok()?;
            Some((regular, bold))
        })
        .as_ref()
}

/// The bitmap backend with its own text rasterizer. (plotters' `ab_glyph` text drawing drops
/// each glyph's side bearing and rounds pen positions, which makes uneven letter spacing.)
/// Layout follows plotters' text metrics, so PNG and SVG figures match.
struct PngBackend<'a>(BitMapBackend<'a>);

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    fn draw_text<TStyle: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        let Some((regular, bold)) = glyph_fonts() else {
            return self.0.draw_text(text, style, pos);
        };
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let face = if matches!(style.style(), FontStyle::Bold) {
            bold
        } else {
            regular
        };
        let size = style.size() as f32;
        let font = face.as_scaled(size);
        // Pen positions and total width as plotters measures them.
        let mut pens = Vec::with_capacity(text.len());
        let mut pen = 0f32;
        let mut prev: Option<GlyphId> = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += font.kern(p, id);
            }
            pens.push((id, pen));
            pen += font.h_advance(id);
            prev = Some(id);
        }
        // The box plotters reserves is `size / 1.24` high; centre the capitals in it.
        let box_h = size / 1.24;
        let cap_h = face
            .outline(face.glyph_id('H'))
            .map(|o| (o.bounds.max.y - o.bounds.min.y).abs() * font.v_scale_factor())
            .unwrap_or(0.7 * size);
        let x0 = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -pen / 2.0,
            HPos::Right => -pen,
        };
        let top = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -box_h / 2.0,
            VPos::Bottom => -box_h,
        };
        let baseline = top + (box_h + cap_h) / 2.0;
        let trans = style.transform();
        let (w, h) = self.get_size();
        for (id, pen) in pens {
            let glyph = id.with_scale_and_position(font.scale(), point(x0 + pen, baseline));
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            let mut pixels = Vec::new();
            outline.draw(|x, y, cov| {
                if cov > 0.0 {
                    pixels.push((b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cov));
                }
            });
            for (x, y, cov) in pixels {
                let (x, y) = trans.transform(x, y);
                let (x, y) = (pos.0 + x, pos.1 + y);
                if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                    let c = BackendColor {
                        alpha: color.alpha * cov.min(1.0) as f64,
                        rgb: color.rgb,
                    };
                    self.0.draw_pixel((x, y), c)?;
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Styling

/// Series colours (matplotlib's "tab10", readable on white and distinguishable).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
const N_MARKERS: usize = 8;
const GRID_BOLD: RGBColor = RGBColor(200, 200, 200);
const GRID_LIGHT: RGBColor = RGBColor(235, 235, 235);
const REF_COLOR: RGBColor = RGBColor(70, 70, 70);
const TEXT_COLOR: RGBColor = RGBColor(20, 20, 20);

const TITLE_SIZE: u32 = 24;
/// Longest rotated x label, in pixels (longer ones are shortened with "…").
const MAX_ROTATED_LABEL: u32 = 200;
const DESC_SIZE: u32 = 20;
const TICK_SIZE: u32 = 16;
const LEGEND_SIZE: u32 = 16;
/// Markers drawn along a line or CDF series (like matplotlib's `markevery`).
const MARKERS_PER_LINE: usize = 12;

fn color_of(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A marker (and, for legends, a short line through it) drawn at one point; a single element
/// type for every marker shape, drawn straight on the backend.
#[derive(Debug, Clone, Copy)]
struct Marker<C> {
    at: C,
    kind: usize,
    r: i32,
    color: RGBColor,
    legend_line: bool,
}

fn marker<C>(kind: usize, at: C, r: i32, color: RGBColor, legend_line: bool) -> Marker<C> {
    Marker {
        at,
        kind: kind % N_MARKERS,
        r,
        color,
        legend_line,
    }
}

impl<'a, C> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let fill = self.color.filled();
        let stroke = self.color.stroke_width(2);
        let (r, r1, r2) = (self.r, self.r + 1, self.r - 1);
        let at = |pts: &[(i32, i32)]| {
            pts.iter()
                .map(|&(dx, dy)| (x + dx, y + dy))
                .collect::<Vec<_>>()
        };
        if self.legend_line {
            backend.draw_path(at(&[(-16, 0), (16, 0)]), &stroke)?;
        }
        match self.kind {
            0 => backend.draw_circle((x, y), r as u32, &fill, true),
            1 => backend.fill_polygon(at(&[(0, -r1), (r1, r2), (-r1, r2)]), &fill),
            2 => backend.draw_rect((x - r2, y - r2), (x + r2, y + r2), &fill, true),
            3 => backend.fill_polygon(at(&[(0, -r1), (r1, 0), (0, r1), (-r1, 0)]), &fill),
            4 => {
                backend.draw_path(at(&[(-r, -r), (r, r)]), &stroke)?;
                backend.draw_path(at(&[(-r, r), (r, -r)]), &stroke)
            }
            5 => backend.fill_polygon(at(&[(0, r1), (r1, -r2), (-r1, -r2)]), &fill),
            6 => {
                backend.draw_path(at(&[(-r1, 0), (r1, 0)]), &stroke)?;
                backend.draw_path(at(&[(0, -r1), (0, r1)]), &stroke)
            }
            _ => {
                backend.draw_circle((x, y), r as u32, &WHITE.filled(), true)?;
                backend.draw_circle((x, y), r as u32, &stroke, false)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Axes

/// How tick values are turned into labels.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LabelFmt {
    /// Linear axis with ticks every `step`.
    Linear { step: f64, sci: bool },
    /// Log axis, ticks at decades: `10ⁿ`, or plain numbers when all are moderate.
    Decades { plain: bool },
    /// Log axis, ticks at other round values.
    LogValues,
    /// Categorical axis.
    Category,
}

/// One axis in "transformed" space: log axes are handled as linear axes over log10(value),
/// which gives full control over the ticks and keeps one coordinate type for all charts.
#[derive(Debug, Clone)]
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
    fmt: LabelFmt,
    cats: Vec<String>,
}

impl Axis {
    /// Value → transformed coordinate, `None` when not drawable on this axis.
    fn tx(log: bool, v: f64) -> Option<f64> {
        if !v.is_finite() || (log && v <= 0.0) {
            None
        } else if log {
            Some(v.log10())
        } else {
            Some(v)
        }
    }

    fn span(&self) -> f64 {
        self.hi - self.lo
    }

    /// Numeric axis over the transformed data extent `ext` (None: no data).
    fn numeric(log: bool, ext: Option<(f64, f64)>, pad_lo: bool, target_ticks: usize) -> Axis {
        // Keep spans finite (values beyond ±1e300 are drawn at the edge).
        let (lo, hi) = ext.unwrap_or((0.0, 1.0));
        let (mut lo, mut hi) = (lo.clamp(-1e300, 1e300), hi.clamp(-1e300, 1e300));
        if hi - lo <= f64::EPSILON * lo.abs().max(hi.abs()).max(1e-300) {
            let d = if log {
                0.5
            } else {
                (lo.abs() * 0.1).max(if lo == 0.0 { 1.0 } else { 0.0 })
            };
            lo -= d;
            hi += d;
        } else {
            let pad = 0.05 * (hi - lo);
            if pad_lo {
                lo -= pad;
            }
            hi += pad;
        }
        if log {
            // Keep 10^x finite.
            lo = lo.max(-300.0);
            hi = hi.min(300.0).max(lo + 1e-9);
            let (major, minor, fmt) = log_ticks(lo, hi);
            Axis {
                log,
                lo,
                hi,
                major,
                minor,
                fmt,
                cats: vec![],
            }
        } else {
            let (major, minor, fmt) = linear_ticks(lo, hi, target_ticks);
            Axis {
                log,
                lo,
                hi,
                major,
                minor,
                fmt,
                cats: vec![],
            }
        }
    }

    /// Categorical axis with `n` slots at x = 0 … n-1.
    fn categorical(cats: &[String], n: usize) -> Axis {
        let n = n.max(1);
        let cats = (0..n)
            .map(|i| cats.get(i).cloned().unwrap_or_else(|| i.to_string()))
            .collect();
        Axis {
            log: false,
            lo: -0.5,
            hi: n as f64 - 0.5,
            major: (0..n).map(|i| i as f64).collect(),
            minor: vec![],
            fmt: LabelFmt::Category,
            cats,
        }
    }

    /// Label for a tick at transformed coordinate `t`.
    fn label(&self, t: f64) -> String {
        match self.fmt {
            LabelFmt::Category => {
                let i = t.round();
                if i >= 0.0 && (i as usize) < self.cats.len() {
                    self.cats[i as usize].clone()
                } else {
                    String::new()
                }
            }
            LabelFmt::Linear { step, sci } => fmt_linear(t, step, sci),
            LabelFmt::Decades { plain } => {
                let k = t.round() as i32;
                if plain {
                    fmt_compact(10f64.powi(k))
                } else {
                    format!("10{}", superscript(k))
                }
            }
            LabelFmt::LogValues => fmt_compact(10f64.powf(t)),
        }
    }
}

/// A "nice" step (1, 2 or 5 × 10ᵉ) giving about `target` intervals over `span`.
fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Multiples of `step` inside [lo, hi].
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if step.is_nan() || step <= 0.0 || !step.is_finite() {
        return vec![];
    }
    let (a, b) = ((lo / step).ceil(), (hi / step).floor());
    if (b - a).is_nan() || b - a >= 10_000.0 {
        return vec![];
    }
    let mut v = Vec::new();
    let mut k = a;
    while k <= b {
        // Snap values that are zero up to rounding.
        let x = k * step;
        v.push(if x.abs() < step * 1e-9 { 0.0 } else { x });
        k += 1.0;
    }
    v
}

fn linear_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, Vec<f64>, LabelFmt) {
    let step = nice_step(hi - lo, target);
    let major = multiples(lo, hi, step);
    let mantissa = (step / 10f64.powf(step.log10().floor())).round();
    let minor_step = if mantissa == 2.0 {
        step / 4.0
    } else {
        step / 5.0
    };
    let minor = multiples(lo, hi, minor_step)
        .into_iter()
        .filter(|m| major.iter().all(|x| (x - m).abs() > minor_step * 1e-6))
        .collect();
    let max_abs = major.iter().fold(0f64, |a, x| a.max(x.abs()));
    let sci = max_abs >= 1e6 || (max_abs > 0.0 && max_abs < 1e-3);
    (major, minor, LabelFmt::Linear { step, sci })
}

/// Ticks of a log axis over [lo, hi] (exponents).
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>, LabelFmt) {
    let decades: Vec<i32> = ((lo.ceil() as i32)..=(hi.floor() as i32)).collect();
    let in_range = |t: f64| t >= lo - 1e-12 && t <= hi + 1e-12;
    if decades.len() >= 3 {
        let stride = decades.len().div_ceil(9).max(1) as i32;
        let major: Vec<f64> = decades
            .iter()
            .filter(|k| k.rem_euclid(stride) == 0)
            .map(|&k| k as f64)
            .collect();
        let mut minor = Vec::new();
        for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
            if stride == 1 {
                for m in 2..=9 {
                    let t = k as f64 + (m as f64).log10();
                    if in_range(t) {
                        minor.push(t);
                    }
                }
            } else if k.rem_euclid(stride) != 0 && in_range(k as f64) {
                minor.push(k as f64);
            }
        }
        let plain = major.iter().all(|&k| (-3.0..=5.0).contains(&k));
        return (major, minor, LabelFmt::Decades { plain });
    }
    // Less than three decades visible: use 1-2-5 × 10ᵏ, then 1…9 × 10ᵏ.
    let cands = |ms: &[u32]| -> Vec<f64> {
        let mut v = Vec::new();
        for k in (lo.floor() as i32 - 1)..=(hi.ceil() as i32) {
            for &m in ms {
                let t = k as f64 + (m as f64).log10();
                if in_range(t) {
                    v.push(t);
                }
            }
        }
        v
    };
    let all: Vec<f64> = cands(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for ms in [&[1u32, 2, 5][..], &[1, 2, 3, 4, 5, 6, 7, 8, 9][..]] {
        let major = cands(ms);
        if major.len() >= 3 || (major.len() >= 2 && ms.len() == 9) {
            let minor = all
                .iter()
                .copied()
                .filter(|t| major.iter().all(|m| (m - t).abs() > 1e-9))
                .collect();
            return (major, minor, LabelFmt::LogValues);
        }
    }
    // A very narrow range: round values, linearly spaced.
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    let step = nice_step(b - a, 5);
    let major = multiples(a, b, step)
        .into_iter()
        .filter(|v| *v > 0.0)
        .map(f64::log10)
        .collect();
    (major, vec![], LabelFmt::LogValues)
}

fn superscript(k: i32) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// Tick label on a linear axis with ticks every `step`; `sci`: use `2.5e6` notation.
fn fmt_linear(v: f64, step: f64, sci: bool) -> String {
    let step_exp = step.log10().floor() as i32;
    if v.abs() < step * 1e-9 {
        // No "-0"; as many decimals as the other labels.
        return if sci {
            "0".into()
        } else {
            format!("{:.*}", (-step_exp).max(0) as usize, 0.0)
        };
    }
    if sci {
        let e = v.abs().log10().floor() as i32;
        let d = (e - step_exp).max(0) as usize;
        format!(
            "{}e{e}",
            trim_zeros(&format!("{:.*}", d, v / 10f64.powi(e)))
        )
    } else {
        format!("{:.*}", (-step_exp).max(0) as usize, v)
    }
}

/// A short label for a positive round number: `200`, `0.05`, `2e6`.
fn fmt_compact(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e6 || v.abs() < 1e-3) {
        let s = format!("{v:.3e}");
        // "2.000e6" → "2e6"
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m)),
            None => s,
        }
    } else {
        trim_zeros(&format!("{v:.6}"))
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// The coordinate system of an axis: linear over the transformed values, with our own ticks
/// (bold = labelled major ticks, light = minor grid lines).
impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let f = (value - self.lo) / self.span();
        if !f.is_finite() {
            return limit.0;
        }
        let len = (limit.1 - limit.0) as f64;
        limit.0 + (len * f.clamp(-10.0, 11.0) + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

// ---------------------------------------------------------------------------------------------
// Data preparation

/// A series cleaned up and mapped to transformed coordinates.
struct Prepared {
    name: String,
    /// Unbroken pieces (a NaN point in a line splits it).
    pieces: Vec<Vec<(f64, f64)>>,
}

impl Prepared {
    fn points(&self) -> impl Iterator<Item = &(f64, f64)> {
        self.pieces.iter().flatten()
    }
}

struct Layout {
    series: Vec<Prepared>,
    hlines: Vec<(String, f64)>,
    x: Axis,
    y: Axis,
    has_data: bool,
}

fn extent(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((a, b)) => Some((a.min(v), b.max(v))),
    })
}

fn prepare(chart: &Chart) -> Layout {
    let categorical = !chart.x_categories.is_empty() || chart.kind == ChartKind::Bar;
    let log_x = chart.log_x && !categorical;
    let log_y = chart.log_y;
    let series: Vec<Prepared> = chart
        .series
        .iter()
        .map(|s| {
            let mut pieces = vec![];
            let mut cur = vec![];
            for &(x, y) in &s.points {
                let p = match (Axis::tx(log_x, x), Axis::tx(log_y, y)) {
                    (Some(x), Some(y)) if !categorical || x > -0.5 => Some((x, y)),
                    _ => None,
                };
                match p {
                    Some(p) => cur.push(p),
                    None if chart.kind == ChartKind::Line && !cur.is_empty() => {
                        pieces.push(std::mem::take(&mut cur));
                    }
                    None => {}
                }
            }
            if !cur.is_empty() {
                pieces.push(cur);
            }
            if chart.kind == ChartKind::Cdf {
                for p in &mut pieces {
                    p.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                }
            }
            Prepared {
                name: s.name.clone(),
                pieces,
            }
        })
        .collect();
    let hlines: Vec<(String, f64)> = chart
        .hlines
        .iter()
        .filter_map(|(l, y)| Axis::tx(log_y, *y).map(|t| (l.clone(), t)))
        .collect();
    let has_data = series.iter().any(|s| !s.pieces.is_empty());

    let x = if categorical {
        let max_idx = series
            .iter()
            .flat_map(|s| s.points())
            .map(|p| p.0.round())
            .fold(-1.0f64, f64::max);
        let n = chart
            .x_categories
            .len()
            .max((max_idx + 1.0).min(1e4) as usize);
        Axis::categorical(&chart.x_categories, n)
    } else {
        Axis::numeric(
            log_x,
            extent(series.iter().flat_map(|s| s.points()).map(|p| p.0)),
            true,
            8,
        )
    };

    let mut ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points())
        .map(|p| p.1)
        .collect();
    ys.extend(hlines.iter().map(|h| h.1));
    let mut pad_lo = true;
    if !log_y && chart.kind == ChartKind::Cdf && !ys.is_empty() {
        // Show the whole [0, 1] span of a distribution.
        let max = ys.iter().copied().fold(f64::MIN, f64::max);
        ys.push(0.0);
        if max <= 1.0 {
            ys.push(1.0);
        }
    }
    if !log_y && chart.kind == ChartKind::Bar {
        // Bars grow from zero; when all are positive they stand on the axis.
        pad_lo = ys.iter().any(|&v| v < 0.0);
        ys.push(0.0);
    }
    let y = Axis::numeric(log_y, extent(ys.into_iter()), pad_lo, 7);
    Layout {
        series,
        hlines,
        x,
        y,
        has_data,
    }
}

/// Reduces a long x-monotonic poly-line to first/min/max/last per pixel-sized bucket.
fn decimate(points: &[(f64, f64)], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    const BUCKETS: f64 = 2000.0;
    if points.len() <= 5000 || !points.windows(2).all(|w| w[0].0 <= w[1].0) {
        return points.to_vec();
    }
    let width = (hi - lo) / BUCKETS;
    let bucket = |x: f64| ((x - lo) / width).floor() as i64;
    let mut out = Vec::with_capacity(8000);
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let mut j = i;
        let (mut imin, mut imax) = (i, i);
        while j < points.len() && bucket(points[j].0) == b {
            if points[j].1 < points[imin].1 {
                imin = j;
            }
            if points[j].1 > points[imax].1 {
                imax = j;
            }
            j += 1;
        }
        let mut idx = vec![i, imin, imax, j - 1];
        idx.sort_unstable();
        idx.dedup();
        out.extend(idx.into_iter().map(|k| points[k]));
        i = j;
    }
    out
}

/// The step path of a CDF: flat until the next value, then up.
fn step_path(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &p) in points.iter().enumerate() {
        if i > 0 {
            out.push((p.0, points[i - 1].1));
        }
        out.push(p);
    }
    out
}

/// About `n` data points evenly spaced along the drawn length of `pieces` (in screen
/// proportions), the first at `phase` (0…1) of a spacing from the start.
fn along_path(
    pieces: &[Vec<(f64, f64)>],
    xa: &Axis,
    ya: &Axis,
    n: usize,
    phase: f64,
) -> Vec<(f64, f64)> {
    let aspect = WIDTH as f64 / HEIGHT as f64;
    let norm = |p: (f64, f64)| {
        (
            (p.0 - xa.lo) / xa.span() * aspect,
            (p.1 - ya.lo) / ya.span(),
        )
    };
    let mut cum = Vec::new();
    let mut len = 0.0;
    for piece in pieces {
        for (k, &p) in piece.iter().enumerate() {
            if k > 0 {
                let (a, b) = (norm(piece[k - 1]), norm(p));
                len += ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
            }
            cum.push((len, p));
        }
    }
    if cum.is_empty() || n == 0 {
        return vec![];
    }
    let gap = len / n as f64;
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    for m in 0..n {
        let target = (m as f64 + phase) * gap;
        while k + 1 < cum.len() && cum[k].0 < target {
            k += 1;
        }
        if out.last() != Some(&cum[k].1) {
            out.push(cum[k].1);
        }
    }
    out
}

/// The legend corner that covers the fewest data points (`box_w`, `box_h`: fractions of the
/// plotting area), and how many sampled points of the data, bars and reference lines (with
/// their labels) it would cover there (0: the corner is free).
fn legend_corner(
    layout: &Layout,
    kind: ChartKind,
    box_w: f64,
    box_h: f64,
) -> (usize, SeriesLabelPosition) {
    let (xa, ya) = (&layout.x, &layout.y);
    let norm = |p: (f64, f64)| ((p.0 - xa.lo) / xa.span(), (p.1 - ya.lo) / ya.span());
    let mut samples: Vec<(f64, f64)> = Vec::new();
    for s in &layout.series {
        for piece in &s.pieces {
            let path = if kind == ChartKind::Cdf {
                step_path(piece)
            } else {
                piece.clone()
            };
            let stride = (path.len() / 3000).max(1);
            let path: Vec<_> = path.iter().step_by(stride).map(|&p| norm(p)).collect();
            for (i, &p) in path.iter().enumerate() {
                samples.push(p);
                if matches!(kind, ChartKind::Line | ChartKind::Cdf) && i + 1 < path.len() {
                    let q = path[i + 1];
                    let d = ((q.0 - p.0).powi(2) + (q.1 - p.1).powi(2)).sqrt();
                    let n = ((d / 0.01) as usize).min(100);
                    for k in 1..n {
                        let f = k as f64 / n as f64;
                        samples.push((p.0 + f * (q.0 - p.0), p.1 + f * (q.1 - p.1)));
                    }
                }
                if kind == ChartKind::Bar {
                    // The whole bar is "ink".
                    let base = ya.lo.max(0.0f64.min(ya.hi));
                    let b = norm((0.0, base)).1;
                    for k in 0..10 {
                        samples.push((p.0, b + (p.1 - b) * k as f64 / 10.0));
                    }
                }
            }
        }
    }
    for (_, y) in &layout.hlines {
        let ny = norm((0.0, *y)).1;
        for k in 0..=50 {
            samples.push((k as f64 / 50.0, ny));
            samples.push((k as f64 / 50.0, ny + 0.05)); // its label
        }
    }
    let (bw, bh) = (box_w + 0.02, box_h + 0.02);
    let count = |x0: f64, y0: f64| {
        samples
            .iter()
            .filter(|p| p.0 >= x0 && p.0 <= x0 + bw && p.1 >= y0 && p.1 <= y0 + bh)
            .count()
    };
    use SeriesLabelPosition::*;
    let cands = [
        (UpperRight, 1.0 - bw, 1.0 - bh),
        (UpperLeft, 0.0, 1.0 - bh),
        (LowerRight, 1.0 - bw, 0.0),
        (LowerLeft, 0.0, 0.0),
    ];
    let mut best = (usize::MAX, UpperRight);
    for (pos, x0, y0) in cands {
        let c = count(x0, y0);
        if c < best.0 {
            best = (c, pos);
        }
    }
    best
}

/// Where the legend goes: in the free corner of the plotting area, or — when every corner
/// would cover data (a bar chart with many tall series, say) and the legend is narrow enough
/// to give up its width — in a column right of the plot, reserved before the axes are laid
/// out. `legend_px`: the legend box (width, height) in pixels; `plot_px`: the plotting area's
/// estimated size if the legend stays inside.
fn legend_placement(
    layout: &Layout,
    kind: ChartKind,
    legend_px: (u32, u32),
    plot_px: (u32, u32),
) -> Option<SeriesLabelPosition> {
    let box_w = legend_px.0 as f64 / plot_px.0.max(1) as f64;
    let box_h = legend_px.1 as f64 / plot_px.1.max(1) as f64;
    let (covered, pos) = legend_corner(layout, kind, box_w, box_h);
    if covered == 0 || legend_px.0 > WIDTH / 3 {
        Some(pos)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Drawing

fn font(size: u32) -> FontDesc<'static> {
    (FONT, size as f64).into_font()
}

/// A drawing error as a message.
fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> String {
    format!("plot: {e}")
}

/// The chart's plotting area with its two axes.
type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<Axis, Axis>>;

/// Width of `s` in the embedded font at `size`, pixels (a rough estimate when the font cannot
/// measure it).
fn text_w<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, s: &str, size: u32) -> u32 {
    root.estimate_text_size(s, &TextStyle::from(font(size)))
        .map(|d| d.0)
        .unwrap_or(size * s.len() as u32)
}

/// Pixel sizes around the plotting area, from the text they hold.
struct Frame {
    /// Outer margin.
    margin: u32,
    /// Height of the x label area (tick labels and axis description).
    x_area: u32,
    /// Width of the y label area.
    y_area: u32,
    /// Font size of the x tick labels.
    x_tick_size: u32,
    /// The x tick labels are rotated (and drawn by [`draw_rotated_x_labels`]).
    x_rotate: bool,
    /// Legend box (width, height).
    legend_px: (u32, u32),
    /// The legend is a column right of the plot instead of a box in a corner of it.
    legend_outside: bool,
    /// Width reserved right of the plot for that column (0 when the legend is inside).
    legend_col: u32,
}

/// Size the label areas from the tick labels and decide where the legend goes.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
) -> Frame {
    let y_tick_w = layout
        .y
        .major
        .iter()
        .map(|&t| text_w(root, &layout.y.label(t), TICK_SIZE))
        .max()
        .unwrap_or(0);
    let y_area = y_tick_w
        + if chart.y_label.is_empty() {
            18
        } else {
            DESC_SIZE + 26
        };
    let margin = 15u32;
    let title_h = if chart.title.is_empty() {
        0
    } else {
        TITLE_SIZE + 10
    };
    let n_series = layout.series.len();
    let legend_px = (
        layout
            .series
            .iter()
            .map(|s| text_w(root, &s.name, LEGEND_SIZE))
            .max()
            .unwrap_or(0)
            + 36
            + 20,
        n_series as u32 * (LEGEND_SIZE + 4) + 20,
    );
    let mut plot_w = WIDTH.saturating_sub(y_area + 2 * margin + 10).max(100);
    let plot_h = HEIGHT
        .saturating_sub(2 * margin + x_labels(root, chart, &layout.x, plot_w).2 + title_h)
        .max(100);
    let legend_outside =
        n_series > 0 && legend_placement(layout, chart.kind, legend_px, (plot_w, plot_h)).is_none();
    let legend_col = if legend_outside { legend_px.0 + 12 } else { 0 };
    plot_w = plot_w.saturating_sub(legend_col).max(100);
    let (x_tick_size, x_rotate, x_area) = x_labels(root, chart, &layout.x, plot_w);
    Frame {
        margin,
        x_area,
        y_area,
        x_tick_size,
        x_rotate,
        legend_px,
        legend_outside,
        legend_col,
    }
}

/// The x tick labels' size, whether they are rotated, and the label area's height, for a
/// plotting area `plot_w` pixels wide: category labels too wide for their slot get a smaller
/// font, then are rotated.
fn x_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    xa: &Axis,
    plot_w: u32,
) -> (u32, bool, u32) {
    let mut x_tick_size = TICK_SIZE;
    let mut x_rotate = false;
    if xa.fmt == LabelFmt::Category && !xa.major.is_empty() {
        let slot = plot_w as f64 / xa.major.len() as f64;
        let widest = |size| {
            xa.cats
                .iter()
                .map(|c| text_w(root, c, size))
                .max()
                .unwrap_or(0) as f64
        };
        if widest(x_tick_size) + 8.0 > slot {
            x_tick_size = 13;
            if widest(x_tick_size) + 6.0 > slot {
                x_rotate = true;
            }
        }
    }
    let x_tick_h = if x_rotate {
        xa.cats
            .iter()
            .map(|c| text_w(root, c, x_tick_size))
            .max()
            .unwrap_or(0)
            .min(MAX_ROTATED_LABEL)
    } else {
        x_tick_size
    };
    let x_area = x_tick_h
        + if chart.x_label.is_empty() {
            20
        } else {
            DESC_SIZE + 24
        };
    (x_tick_size, x_rotate, x_area)
}

/// Draws `chart` on `root`. `raster`: the backend is a bitmap, whose thick poly-lines get
/// long miter spikes at sharp turns, so lines are drawn segment by segment there.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    raster: bool,
) -> Result<(), String> {
    ensure_font()?;
    let layout = prepare(chart);
    root.fill(&WHITE).map_err(plot_err)?;
    let frame = frame(root, chart, &layout);
    let mut plot = axes(root, chart, &layout, &frame)?;
    for (i, s) in layout.series.iter().enumerate() {
        match chart.kind {
            ChartKind::Line | ChartKind::Cdf => {
                draw_line_series(&mut plot, chart.kind, &layout, i, s, raster)?
            }
            ChartKind::Scatter => draw_scatter_series(&mut plot, &layout, i, s)?,
            ChartKind::Bar => draw_bar_series(&mut plot, &layout, i, s)?,
        }
    }
    draw_hlines(&mut plot, &layout)?;
    if !layout.has_data {
        draw_no_data(&mut plot, &layout)?;
    }
    if frame.legend_outside {
        draw_legend_column(root, &plot, chart.kind, &layout, frame.legend_px)?;
    } else if !layout.series.is_empty() {
        draw_legend_box(&mut plot, chart.kind, &layout, frame.legend_px)?;
    }
    Ok(())
}

/// The title, the plotting area and its mesh: grid lines, axes, tick labels and axis
/// descriptions.
fn axes<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    chart: &Chart,
    layout: &Layout,
    frame: &Frame,
) -> Result<Plot<'a, DB>, String> {
    let (xa, ya) = (&layout.x, &layout.y);
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(frame.margin)
        .margin_right(frame.margin + 15 + frame.legend_col)
        .x_label_area_size(frame.x_area)
        .y_label_area_size(frame.y_area);
    if !chart.title.is_empty() {
        builder.caption(
            &chart.title,
            FontDesc::new(FontFamily::Name(FONT), TITLE_SIZE as f64, FontStyle::Bold)
                .color(&TEXT_COLOR),
        );
    }
    let mut plot = builder
        .build_cartesian_2d(xa.clone(), ya.clone())
        .map_err(plot_err)?;

    // Rotated category labels are drawn below (plotters would centre them on the tick).
    let x_fmt = |t: &f64| {
        if frame.x_rotate {
            String::new()
        } else {
            xa.label(*t)
        }
    };
    let y_fmt = |t: &f64| ya.label(*t);
    let x_style = font(frame.x_tick_size).color(&TEXT_COLOR);
    let mut mesh = plot.configure_mesh();
    mesh.bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(BLACK.stroke_width(1))
        .x_label_style(x_style)
        .y_label_style(font(TICK_SIZE).color(&TEXT_COLOR))
        .axis_desc_style(font(DESC_SIZE).color(&TEXT_COLOR))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str());
    if xa.fmt == LabelFmt::Category {
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(plot_err)?;
    if frame.x_rotate {
        draw_rotated_x_labels(root, &mut plot, layout, frame.x_tick_size)?;
    }
    Ok(plot)
}

/// The x tick labels turned a quarter, hanging below the axis; a label longer than
/// [`MAX_ROTATED_LABEL`] is shortened with "…".
fn draw_rotated_x_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &mut Plot<'_, DB>,
    layout: &Layout,
    size: u32,
) -> Result<(), String> {
    let (xa, ya) = (&layout.x, &layout.y);
    let style = font(size)
        .color(&TEXT_COLOR)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    let labels: Vec<(f64, String)> = xa
        .major
        .iter()
        .map(|&t| {
            let mut l = xa.label(t);
            while l.chars().count() > 1 && text_w(root, &l, size) > MAX_ROTATED_LABEL {
                l.pop();
                l.pop();
                l.push('…');
            }
            (t, l)
        })
        .collect();
    plot.draw_series(
        labels
            .into_iter()
            .map(|(t, l)| EmptyElement::at((t, ya.lo)) + Text::new(l, (0, 8), style.clone())),
    )
    .map_err(plot_err)?;
    Ok(())
}

/// Series `i` of a line or CDF chart: its pieces as poly-lines (CDF: as steps), thinned to
/// the pixels they cover, with markers along them.
fn draw_line_series<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    kind: ChartKind,
    layout: &Layout,
    i: usize,
    s: &Prepared,
    raster: bool,
) -> Result<(), String> {
    let (xa, ya) = (&layout.x, &layout.y);
    let color = color_of(i);
    let mk = i % N_MARKERS;
    let paths: Vec<Vec<(f64, f64)>> = s
        .pieces
        .iter()
        .map(|p| {
            let path = if kind == ChartKind::Cdf {
                step_path(p)
            } else {
                p.clone()
            };
            decimate(&path, xa.lo, xa.hi)
        })
        .flat_map(|p| {
            if raster && p.len() > 2 {
                p.windows(2).map(|w| w.to_vec()).collect()
            } else {
                vec![p]
            }
        })
        .collect();
    plot.draw_series(
        paths
            .into_iter()
            .map(|p| PathElement::new(p, color.stroke_width(2))),
    )
    .map_err(plot_err)?
    .label(s.name.clone())
    .legend(move |c| marker(mk, (c.0 + 16, c.1), 5, color, true));
    let total: usize = s.pieces.iter().map(Vec::len).sum();
    let marks: Vec<(f64, f64)> = if total <= 40 {
        s.points().copied().collect()
    } else {
        // Offset per series so that markers of similar curves do not stack.
        let phase = (0.5 + (i % 3) as f64) / 3.0;
        along_path(&s.pieces, xa, ya, MARKERS_PER_LINE, phase)
    };
    plot.draw_series(marks.into_iter().map(|p| marker(mk, p, 5, color, false)))
        .map_err(plot_err)?;
    Ok(())
}

/// Series `i` of a scatter plot: a marker per point (smaller for large inputs, one per spot
/// for very large ones).
fn draw_scatter_series<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    layout: &Layout,
    i: usize,
    s: &Prepared,
) -> Result<(), String> {
    let (xa, ya) = (&layout.x, &layout.y);
    let color = color_of(i);
    let mk = i % N_MARKERS;
    let total: usize = s.pieces.iter().map(Vec::len).sum();
    let r = if total > 2000 { 3 } else { 4 };
    let mut seen = std::collections::HashSet::new();
    let pts: Vec<(f64, f64)> = s
        .points()
        .copied()
        .filter(|p| {
            // Drop markers that would land on the same spot (large inputs).
            total <= 5000
                || seen.insert((
                    ((p.0 - xa.lo) / xa.span() * 1500.0) as i64,
                    ((p.1 - ya.lo) / ya.span() * 1000.0) as i64,
                ))
        })
        .collect();
    plot.draw_series(pts.into_iter().map(|p| marker(mk, p, r, color, false)))
        .map_err(plot_err)?
        .label(s.name.clone())
        .legend(move |c| marker(mk, (c.0 + 16, c.1), 5, color, false));
    Ok(())
}

/// Series `i` of a bar chart: its bar in each category group, outlined.
fn draw_bar_series<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    layout: &Layout,
    i: usize,
    s: &Prepared,
) -> Result<(), String> {
    let ya = &layout.y;
    let color = color_of(i);
    let group = 0.8;
    let w = group / layout.series.len().max(1) as f64;
    let base = if ya.log {
        ya.lo
    } else {
        0.0f64.clamp(ya.lo, ya.hi)
    };
    let rects: Vec<[(f64, f64); 2]> = s
        .points()
        .map(|&(x, y)| {
            let left = x.round() - group / 2.0 + i as f64 * w;
            let y = y.clamp(ya.lo, ya.hi);
            [(left + 0.04 * w, base), (left + 0.96 * w, y)]
        })
        .collect();
    plot.draw_series(rects.iter().map(|r| Rectangle::new(*r, color.filled())))
        .map_err(plot_err)?
        .label(s.name.clone())
        .legend(move |c| Rectangle::new([(c.0 + 4, c.1 - 7), (c.0 + 28, c.1 + 7)], color.filled()));
    plot.draw_series(
        rects
            .iter()
            .map(|r| Rectangle::new(*r, RGBColor(40, 40, 40).stroke_width(1))),
    )
    .map_err(plot_err)?;
    Ok(())
}

/// Reference lines: dashed, labelled at their right end.
fn draw_hlines<DB: DrawingBackend>(plot: &mut Plot<'_, DB>, layout: &Layout) -> Result<(), String> {
    let (xa, ya) = (&layout.x, &layout.y);
    for (label, y) in &layout.hlines {
        let (dash, gap) = (0.012 * xa.span(), 0.008 * xa.span());
        let mut dashes = vec![];
        let mut x = xa.lo;
        while x < xa.hi {
            dashes.push(vec![(x, *y), ((x + dash).min(xa.hi), *y)]);
            x += dash + gap;
        }
        plot.draw_series(
            dashes
                .into_iter()
                .map(|d| PathElement::new(d, REF_COLOR.stroke_width(2))),
        )
        .map_err(plot_err)?;
        if !label.is_empty() {
            let style = font(14)
                .color(&REF_COLOR)
                .pos(Pos::new(HPos::Right, VPos::Bottom));
            plot.draw_series(std::iter::once(Text::new(
                label.clone(),
                (xa.hi - 0.01 * xa.span(), *y + 0.018 * ya.span()),
                style,
            )))
            .map_err(plot_err)?;
        }
    }
    Ok(())
}

/// The "no data" note in the middle of an empty chart.
fn draw_no_data<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    layout: &Layout,
) -> Result<(), String> {
    let (xa, ya) = (&layout.x, &layout.y);
    let style = font(28)
        .color(&RGBColor(150, 150, 150))
        .pos(Pos::new(HPos::Center, VPos::Center));
    plot.draw_series(std::iter::once(Text::new(
        "no data",
        ((xa.lo + xa.hi) / 2.0, (ya.lo + ya.hi) / 2.0),
        style,
    )))
    .map_err(plot_err)?;
    Ok(())
}

/// The legend as a column right of the plotting area, top-aligned with it.
fn draw_legend_column<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &Plot<'_, DB>,
    kind: ChartKind,
    layout: &Layout,
    legend_px: (u32, u32),
) -> Result<(), String> {
    let (px, py) = plot.plotting_area().get_base_pixel();
    let (pw, _) = plot.plotting_area().dim_in_pixel();
    let (x0, y0) = (px + pw as i32 + 12, py);
    let (w, h) = (legend_px.0 as i32, legend_px.1 as i32);
    root.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        RGBColor(160, 160, 160).stroke_width(1),
    ))
    .map_err(plot_err)?;
    for (i, s) in layout.series.iter().enumerate() {
        let color = color_of(i);
        let mk = i % N_MARKERS;
        let y = y0 + 10 + i as i32 * (LEGEND_SIZE as i32 + 4) + LEGEND_SIZE as i32 / 2;
        match kind {
            ChartKind::Bar => root.draw(&Rectangle::new(
                [(x0 + 14, y - 7), (x0 + 38, y + 7)],
                color.filled(),
            )),
            ChartKind::Line | ChartKind::Cdf => {
                root.draw(&marker(mk, (x0 + 26, y), 5, color, true))
            }
            ChartKind::Scatter => root.draw(&marker(mk, (x0 + 26, y), 5, color, false)),
        }
        .map_err(plot_err)?;
        let style = font(LEGEND_SIZE)
            .color(&TEXT_COLOR)
            .pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(s.name.clone(), (x0 + 46, y), style))
            .map_err(plot_err)?;
    }
    Ok(())
}

/// The legend as a box in the corner of the plotting area that covers the fewest points.
fn draw_legend_box<'a, DB: DrawingBackend + 'a>(
    plot: &mut Plot<'a, DB>,
    kind: ChartKind,
    layout: &Layout,
    legend_px: (u32, u32),
) -> Result<(), String> {
    let (pw, ph) = plot.plotting_area().dim_in_pixel();
    let box_w = legend_px.0 as f64 / pw.max(1) as f64;
    let box_h = legend_px.1 as f64 / ph.max(1) as f64;
    let (_, pos) = legend_corner(layout, kind, box_w, box_h);
    plot.configure_series_labels()
        .position(pos)
        .legend_area_size(36)
        .margin(10)
        .label_font(font(LEGEND_SIZE).color(&TEXT_COLOR))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()
        .map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sfc-plot-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Renders `chart`, checks both files, returns the SVG text.
    fn check(chart: &Chart, dir: &Path, name: &str) -> String {
        let stem = dir.join(name);
        render(chart, &stem).unwrap();
        let png = fs::read(dir.join(format!("{name}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: not a PNG");
        let svg = fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{name}: not an SVG");
        for s in &chart.series {
            assert!(svg.contains(&s.name), "{name}: SVG lacks series {}", s.name);
        }
        svg
    }

    fn no_temp_left(dir: &Path) {
        for e in fs::read_dir(dir).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!n.starts_with('.'), "temp file left behind: {n}");
        }
    }

    #[test]
    fn renders_every_kind() {
        let dir = tmpdir("kinds");
        let line = Chart::new(
            ChartKind::Line,
            "FCT slowdown",
            "flow size (bytes)",
            "p99 slowdown",
        )
        .with_log(true, true)
        .with_series(
            "SFC",
            (1..60)
                .map(|i| (1e3 * 1.3f64.powi(i), 1.0 + i as f64))
                .collect(),
        )
        .with_series(
            "DCQCN",
            (1..60)
                .map(|i| (1e3 * 1.3f64.powi(i), 2.0 + (i * i) as f64 / 10.0))
                .collect(),
        )
        .with_hline("paper: 16", 16.0);
        let svg = check(&line, &dir, "line");
        assert!(svg.contains("paper: 16"));
        let cdf = Chart::new(ChartKind::Cdf, "Buffer occupancy", "buffer (MB)", "CDF").with_series(
            "PFC",
            (0..200)
                .map(|i| (i as f64 * 0.1, (i + 1) as f64 / 200.0))
                .collect(),
        );
        check(&cdf, &dir, "cdf");
        let scatter = Chart::new(ChartKind::Scatter, "Scatter", "x", "y")
            .with_series("a", vec![(1.0, 2.0), (2.0, 3.0), (3.0, 1.0)])
            .with_series("b", vec![(1.5, 2.5)]);
        check(&scatter, &dir, "scatter");
        let bar = Chart::new(ChartKind::Bar, "Pause frames", "scheme", "count")
            .with_categories(["light", "medium", "heavy"])
            .with_series("SFC", vec![(0.0, 1.0), (1.0, 5.0), (2.0, 9.0)])
            .with_series("HPCC", vec![(0.0, 2.0), (1.0, 4.0), (2.0, 12.0)]);
        let svg = check(&bar, &dir, "bar");
        assert!(svg.contains("medium"));
        let mut bar_log = bar.clone();
        bar_log.log_y = true;
        check(&bar_log, &dir, "bar_log");
        no_temp_left(&dir);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_legend_with_no_free_corner_moves_right_of_the_plot() {
        // Ten bar series, the first and last of each group the tallest: every corner of the
        // plotting area has ink under a 10-entry legend.
        let mut crowded = Chart::new(ChartKind::Bar, "t", "x", "y").with_categories(["a", "b"]);
        for k in 0..10 {
            let h = if k == 0 || k == 9 {
                30.0
            } else {
                5.0 + k as f64
            };
            crowded = crowded.with_series(format!("series {k}"), vec![(0.0, h), (1.0, h)]);
        }
        let layout = prepare(&crowded);
        let legend_px = (220, 10 * (LEGEND_SIZE + 4) + 20);
        assert_eq!(
            legend_placement(&layout, ChartKind::Bar, legend_px, (850, 520)),
            None
        );
        // A legend wider than a third of the image stays inside (in the least covered corner).
        assert!(
            legend_placement(&layout, ChartKind::Bar, (WIDTH / 3 + 1, 100), (850, 520)).is_some()
        );
        // Two short bar series leave a corner free: the legend stays inside.
        let sparse = Chart::new(ChartKind::Bar, "t", "x", "y")
            .with_categories(["a", "b"])
            .with_series("low", vec![(0.0, 1.0), (1.0, 1.0)])
            .with_series("high", vec![(0.0, 2.0), (1.0, 10.0)]);
        let layout = prepare(&sparse);
        assert!(legend_placement(&layout, ChartKind::Bar, (150, 60), (850, 520)).is_some());
        // The crowded chart still renders (PNG and SVG), with every series name.
        let dir = tmpdir("legend");
        let svg = check(&crowded, &dir, "crowded");
        assert!(svg.contains("series 9"));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn tolerates_bad_and_missing_data() {
        let dir = tmpdir("bad");
        let nan = Chart::new(ChartKind::Line, "with NaN", "time (us)", "queue (KB)")
            .with_log(true, false)
            .with_series(
                "q",
                vec![
                    (0.0, 1.0),
                    (1.0, f64::NAN),
                    (2.0, 3.0),
                    (f64::INFINITY, 1.0),
                    (3.0, 2.0),
                ],
            )
            .with_series("neg", vec![(-1.0, 1.0)])
            .with_series("empty", vec![])
            .with_hline("inf", f64::INFINITY);
        check(&nan, &dir, "nan");
        let empty = Chart::new(ChartKind::Cdf, "", "", "")
            .with_log(true, true)
            .with_series("none", vec![]);
        let svg = check(&empty, &dir, "empty");
        assert!(svg.contains("no data"));
        check(&Chart::default(), &dir, "default");
        let huge = Chart::new(ChartKind::Line, "huge", "x", "y").with_series(
            "h",
            vec![(-f64::MAX, f64::MAX), (f64::MAX, -f64::MAX), (0.0, 1e-320)],
        );
        check(&huge, &dir, "huge");
        let flat =
            Chart::new(ChartKind::Scatter, "flat", "x", "y").with_series("c", vec![(5.0, 5.0)]);
        check(&flat, &dir, "flat");
        let nested = dir.join("sub/dir");
        render(&flat, &nested.join("fig")).unwrap();
        assert!(nested.join("fig.png").exists() && nested.join("fig.svg").exists());
        assert!(render(&flat, Path::new("/")).is_err());
        no_temp_left(&dir);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn ticks_and_labels() {
        let (major, minor, fmt) = log_ticks(-0.2, 4.3);
        assert_eq!(major, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(minor.len(), 3 + 8 * 4); // 7e-1…9e-1, then 2…9 × 10⁰…10³
        let ax = Axis {
            log: true,
            lo: -0.2,
            hi: 4.3,
            major,
            minor,
            fmt,
            cats: vec![],
        };
        assert_eq!(ax.label(3.0), "1000");
        let (major, _, fmt) = log_ticks(1.9, 8.1);
        assert_eq!(major.len(), 7);
        assert_eq!(fmt, LabelFmt::Decades { plain: false });
        assert_eq!(superscript(-12), "⁻¹²");
        let (major, _, _) = log_ticks(0.4, 1.5);
        assert!(major.len() >= 3, "{major:?}");
        let (major, _, fmt) = linear_ticks(-0.05, 1.05, 7);
        assert!(major.contains(&0.0) && major.contains(&1.0));
        if let LabelFmt::Linear { step, sci } = fmt {
            assert_eq!(fmt_linear(0.2, step, sci), "0.2");
            assert_eq!(fmt_linear(0.0, step, sci), "0.0");
        }
        assert_eq!(fmt_linear(2.5e6, 5e5, true), "2.5e6");
        assert_eq!(fmt_linear(4e5, 2e5, true), "4e5");
        assert_eq!(fmt_compact(2e6), "2e6");
        assert_eq!(fmt_compact(0.05), "0.05");
        let ax = Axis::numeric(false, Some((0.0, 10.0)), true, 8);
        let line: Vec<(f64, f64)> = (0..=100).map(|i| (i as f64 / 10.0, 1.0)).collect();
        let marks = along_path(&[line], &ax, &ax, 5, 0.5);
        assert_eq!(marks.len(), 5);
        assert!(
            (marks[0].0 - 1.0).abs() < 0.11 && (marks[4].0 - 9.0).abs() < 0.11,
            "{marks:?}"
        );
        let long: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        assert!(decimate(&long, 0.0, 1e5).len() <= 8000);
    }
}
