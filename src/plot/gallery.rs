//! Test gallery: one illustrative spec of each chart kind, shaped like the papers' figures (values are
//! synthetic and only exercise the layout). `CROSSLING_PLOT_GALLERY=DIR cargo test --lib plot::gallery`
//! writes them to DIR for inspection; otherwise they go to a temporary folder.
use super::spec::*;

fn layers(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

/// `(file stem, spec)` for every chart kind, with Latin, Cyrillic and CJK text in labels.
pub fn specs() -> Vec<(&'static str, ChartSpec)> {
    let curve = |a: f64, b: f64| (0..13).map(|i| Some(a + b * (i as f64 / 12.0) * (1.0 - i as f64 / 24.0))).collect();
    let line = ChartSpec::Line(LineChart {
        title: "Word retrieval MRR per layer — en→ru (русский)".into(),
        x_label: "layer".into(),
        y_label: "MRR".into(),
        x: XAxis::Labels(layers(13)),
        series: vec![
            LineSeries {
                name: "BERT (ours)".into(),
                y: curve(0.2, 0.6),
                lower: Some(curve(0.17, 0.55)),
                upper: Some(curve(0.23, 0.65)),
                dashed: false,
            },
            LineSeries {
                name: "GloVe".into(),
                y: {
                    let mut v: Vec<Option<f64>> = curve(0.3, 0.1);
                    v[5] = None;
                    v
                },
                lower: None,
                upper: None,
                dashed: false,
            },
            LineSeries { name: "paper".into(), y: curve(0.25, 0.62), lower: None, upper: None, dashed: true },
        ],
        y_range: None,
        reference_lines: vec![ReferenceLine { y: 0.1, label: "random ranking".into() }],
        legend: LegendPosition::Bottom,
        size: None,
    });
    let bars = ChartSpec::GroupedBars(GroupedBars {
        title: "Dependency parsing LAS, en → target".into(),
        x_label: "target language".into(),
        y_label: "LAS (labelled attachment)".into(),
        groups: vec!["fr".into(), "de".into(), "ru".into(), "zh (中文)".into()],
        series: vec![
            BarSeries {
                name: "Default".into(),
                values: vec![Some(71.2), Some(65.0), Some(58.3), Some(31.0)],
                errors: Some(vec![Some(1.1), Some(0.8), None, Some(2.0)]),
                intervals: None,
                reference: Some(vec![Some(73.0), Some(67.5), Some(60.1), None]),
            },
            BarSeries {
                name: "Sep Emb".into(),
                values: vec![Some(69.8), None, Some(55.0), Some(29.5)],
                errors: None,
                intervals: Some(vec![Some([67.9, 71.0]), None, Some([52.1, 56.2]), None]),
                reference: None,
            },
            BarSeries {
                name: "Sep L1-3".into(),
                values: vec![Some(60.4), Some(58.8), Some(50.2), Some(20.3)],
                errors: None,
                intervals: None,
                reference: None,
            },
        ],
        value_labels: true,
        value_format: "{:.1}".into(),
        reference_label: "paper".into(),
        y_range: None,
        reference_lines: vec![ReferenceLine { y: 25.0, label: "chance 25".into() }],
        legend: LegendPosition::Bottom,
        size: None,
    });
    let langs: Vec<String> = crate::LANGUAGES.iter().map(|s| s.to_string()).collect();
    let heat = ChartSpec::HeatmapTable(HeatmapTable {
        title: "Zero-shot XNLI accuracy (train → test)".into(),
        row_label: "train".into(),
        col_label: "test".into(),
        rows: langs.clone(),
        cols: langs.clone(),
        values: (0..5)
            .map(|r| (0..5).map(|c| if r == 4 && c == 1 { None } else { Some(0.80 - 0.04 * (r + c) as f64) }).collect())
            .collect(),
        format: "{:.1%}".into(),
        color: ColorScale::Viridis,
        range: None,
        colorbar: true,
        size: None,
    });
    let alpha = ChartSpec::AlphaLayerHeatmap(AlphaLayerHeatmap {
        title: "MDS convert rate en→zh over α and layer".into(),
        alphas: vec![0.0, 0.5, 1.0, 1.5, 2.0, 3.0],
        layers: layers(13),
        values: (0..6)
            .map(|a| {
                (0..13).map(|l| Some(0.1 + 0.5 * (a as f64 / 5.0) * (1.0 - (l as f64 - 8.0).abs() / 12.0))).collect()
            })
            .collect(),
        value_label: "convert rate".into(),
        show_numbers: true,
        format: "{:.2}".into(),
        best: Best::Max,
        color: ColorScale::Viridis,
        range: None,
        size: None,
    });
    let panel = |title: &str, emb: bool, sep_low: usize, link: Option<SchematicLink>| SchematicPanel {
        title: title.into(),
        embeddings_shared: emb,
        layers_shared: (1..=4).map(|l| l > sep_low).collect(),
        softmax_shared: emb,
        link,
    };
    let schematic = ChartSpec::Schematic(Schematic {
        title: "Parameter sharing ablations".into(),
        languages: vec!["en".into(), "fr".into()],
        panels: vec![
            panel("Default", true, 0, None),
            panel("Sep Emb", false, 0, None),
            panel("Sep L1-3", true, 3, None),
            panel("Sep Emb + L1-3", false, 3, None),
        ],
        size: None,
    });
    let probe = ChartSpec::Schematic(Schematic {
        title: "Probing two monolingual models".into(),
        languages: vec!["en BERT".into(), "ru BERT".into()],
        panels: vec![SchematicPanel {
            title: "Monolingual en / ru".into(),
            embeddings_shared: false,
            layers_shared: vec![false; 4],
            softmax_shared: false,
            link: Some(SchematicLink { level: 3, label: "linear map W".into() }),
        }],
        size: None,
    });
    let panels = ChartSpec::Panels(Panels {
        title: "Sentence retrieval accuracy per layer".into(),
        columns: 2,
        charts: ["(a) en–fr", "(b) en–de", "(c) en–ru", "(d) en–zh"]
            .iter()
            .enumerate()
            .map(|(k, t)| {
                ChartSpec::Line(LineChart {
                    title: t.to_string(),
                    x_label: "layer".into(),
                    y_label: "accuracy".into(),
                    x: XAxis::Numbers((1..=8).map(f64::from).collect()),
                    series: vec![
                        LineSeries {
                            name: "bilingual".into(),
                            y: (1..=8).map(|l| Some(0.3 + 0.06 * l as f64 - 0.05 * k as f64)).collect(),
                            lower: None,
                            upper: None,
                            dashed: false,
                        },
                        LineSeries {
                            name: "monolingual".into(),
                            y: (1..=8).map(|l| Some(0.2 + 0.04 * l as f64 - 0.03 * k as f64)).collect(),
                            lower: None,
                            upper: None,
                            dashed: false,
                        },
                    ],
                    y_range: Some([0.0, 1.0]),
                    reference_lines: vec![],
                    legend: LegendPosition::Bottom,
                    size: None,
                })
            })
            .collect(),
        panel_size: None,
    });
    // Dense layouts: rotated category labels, rotated value labels, right-hand legend, small cells.
    let dense_bars = ChartSpec::GroupedBars(GroupedBars {
        title: "XNLI accuracy by fine-tuning language (dense layout)".into(),
        x_label: String::new(),
        y_label: "accuracy".into(),
        groups: ["english-only", "french-only", "german-only", "russian-only", "chinese-only", "all five"]
            .map(String::from)
            .to_vec(),
        series: (0..5)
            .map(|s| BarSeries {
                name: format!("{} test", crate::LANGUAGES[s]),
                values: (0..6).map(|g| Some(0.45 + 0.05 * ((s * 7 + g * 3) % 7) as f64)).collect(),
                errors: None,
                intervals: None,
                reference: if s == 0 { Some((0..6).map(|g| Some(0.5 + 0.02 * g as f64)).collect()) } else { None },
            })
            .collect(),
        value_labels: true,
        value_format: "{:.3}".into(),
        reference_label: "paper".into(),
        y_range: Some([0.0, 1.0]),
        reference_lines: vec![],
        legend: LegendPosition::Right,
        size: None,
    });
    let dense_heat = ChartSpec::HeatmapTable(HeatmapTable {
        title: "Linear CKA between layers (dense layout)".into(),
        row_label: "layer (en model)".into(),
        col_label: "layer (ru model)".into(),
        rows: layers(13),
        cols: layers(13),
        values: (0..13)
            .map(|r| (0..13).map(|c| Some(1.0 - 0.07 * (r as f64 - c as f64).abs() - 0.01 * r as f64)).collect())
            .collect(),
        format: "{:.3}".into(),
        color: ColorScale::Blues,
        range: Some([0.0, 1.0]),
        colorbar: false,
        size: None,
    });
    let mixed = ChartSpec::Panels(Panels {
        title: "Mixed panels: heat map beside bars".into(),
        columns: 2,
        charts: vec![alpha.clone(), bars.clone()],
        panel_size: None,
    });
    vec![
        ("panels_mixed", mixed),
        ("dense_bars", dense_bars),
        ("dense_heatmap", dense_heat),
        ("line", line),
        ("grouped_bars", bars),
        ("heatmap_table", heat),
        ("alpha_layer_heatmap", alpha),
        ("schematic", schematic),
        ("schematic_probe", probe),
        ("panels", panels),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn gallery_writes_png_and_svg_for_every_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::env::var_os("CROSSLING_PLOT_GALLERY").map_or_else(|| tmp.path().to_path_buf(), Into::into);
        let footer = vec![
            "smoke scale · seed 0 · 3 MLMs: 4 layers × 128 wide, 4 heads, 800 steps × 16 × 128 = 1.6M tokens"
                .to_string(),
            "1 substitution of the study's setup: see the caption and the record".to_string(),
        ];
        for (stem, spec) in super::specs() {
            let paths = crate::plot::render(&spec, &footer, &dir.join(stem)).unwrap();
            assert_eq!(paths.len(), 2);
            let png = std::fs::read(&paths[0]).unwrap();
            assert!(png.len() > 5_000 && png.starts_with(b"\x89PNG\r\n\x1a\n"), "{stem}.png");
            let svg = std::fs::read_to_string(&paths[1]).unwrap();
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{stem}.svg");
            let title = spec.title().replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
            assert!(svg.contains(&title), "{stem}.svg lacks its title {title:?}");
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left behind: {leftovers:?}");
    }
}
