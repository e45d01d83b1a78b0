//! PNG copies of the SVG charts, rasterised in pure Rust (resvg) with the system's fonts.
//!
//! Text needs a font: DejaVu Sans (`apt-get install fonts-dejavu-core`) is preferred and is
//! what the SVGs ask for first. Without any font the PNGs are still written, without text,
//! and a warning says how to fix it.

use std::sync::{Arc, OnceLock};

use anyhow::Context;
use resvg::{tiny_skia, usvg};

/// Pixels per SVG pixel in the PNG (2 = sharp on high-density screens and in documents).
pub const SCALE: f32 = 2.0;

/// The font database, loaded once per process.
fn fonts() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        let has = |family: &str| {
            db.faces()
                .any(|f| f.families.iter().any(|(name, _)| name == family))
        };
        if has("DejaVu Sans") {
            db.set_sans_serif_family("DejaVu Sans");
        } else if db.is_empty() {
            eprintln!(
                "asynclab: no system fonts found; PNG charts will have no text (install fonts-dejavu-core)"
            );
        }
        Arc::new(db)
    })
    .clone()
}

/// Renders an SVG document to PNG bytes at [`SCALE`].
pub fn svg_to_png(svg: &str) -> anyhow::Result<Vec<u8>> {
    let opt = usvg::Options {
        fontdb: fonts(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).context("the chart is not valid SVG")?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(SCALE)
        .context("chart has no size")?;
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).context("chart too large for a PNG")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding PNG")
}
