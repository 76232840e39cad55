"""The heatmap PNG: a valid image of the expected size, missing pairs and
highlighted nodes drawn in their colours, atomic writing, one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib import colors
from matplotlib.image import imread

from rankwise.util.errors import RankwiseError
from rankwise.model.model import MEASURED, MISSING, Model
from rankwise.report.plots import DPI, FIGSIZE, HIGHLIGHT_COLOR, MAX_LABELS, MISSING_COLOR, label_positions, plot_model

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WIDTH, HEIGHT = round(FIGSIZE[0] * DPI), round(FIGSIZE[1] * DPI)


def rack_model(racks=4, per_rack=16, missing=((40, 41), (41, 40), (10, 60)), seed=1) -> Model:
    """racks x per_rack nodes: 2 us inside a rack, 6 us across, 12.5 GB/s;
    node 5's bandwidth at a quarter; some pairs missing."""
    n = racks * per_rack
    rng = np.random.default_rng(seed)
    m = Model.empty([f"node-{i}" for i in range(n)], [8, 1 << 20])
    rack = np.arange(n) // per_rack
    alpha = np.where(rack[:, None] == rack[None, :], 2e-6, 6e-6) * rng.normal(1, 0.02, (n, n))
    bw = 12.5e9 * rng.normal(1, 0.02, (n, n))
    if n > 5:
        bw[5, :] *= 0.25
        bw[:, 5] *= 0.25
    m.alpha[:], m.beta[:] = (alpha + alpha.T) / 2, 1 / bw
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    for i, j in missing:
        m.state[i, j] = MISSING
    m.alpha[m.state != MEASURED] = np.nan
    m.beta[m.state != MEASURED] = np.nan
    m.source = "synthetic"
    m.created = 1.79e9
    return m


def pixels_near(image: np.ndarray, color: str, tol: float = 0.04) -> int:
    rgb = np.array(colors.to_rgb(color))
    return int((np.abs(image[..., :3] - rgb).max(axis=-1) < tol).sum())


def read_png(path) -> np.ndarray:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = imread(path)
    assert image.shape[:2] == (HEIGHT, WIDTH)
    return image


def test_writes_a_valid_png(tmp_path):
    path = tmp_path / "heat.png"
    assert plot_model(rack_model(), path) == path
    image = read_png(path)
    assert image.shape == (1000, 2000, 4)
    assert image[..., :3].std() > 0.1  # something was drawn
    # Atomic: only the final file is left in the directory.
    assert [p.name for p in tmp_path.iterdir()] == ["heat.png"]


def test_overwrites_an_existing_file(tmp_path):
    path = tmp_path / "heat.png"
    path.write_text("old")
    plot_model(rack_model(racks=2, per_rack=3, missing=()), path)
    read_png(path)


def test_model_from_file(tmp_path):
    m = rack_model(racks=2, per_rack=2, missing=((0, 3),))
    m.save(tmp_path / "m.rwm")
    plot_model(Model.load(tmp_path / "m.rwm"), tmp_path / "small.png")
    read_png(tmp_path / "small.png")


def test_missing_pairs_have_their_own_colour(tmp_path):
    # The legend always shows the missing colour; missing cells add much more of it.
    with_missing = rack_model(racks=2, per_rack=4, missing=((0, 5), (5, 0), (2, 3)))
    without = rack_model(racks=2, per_rack=4, missing=())
    plot_model(with_missing, tmp_path / "a.png")
    plot_model(without, tmp_path / "b.png")
    a = pixels_near(read_png(tmp_path / "a.png"), MISSING_COLOR)
    b = pixels_near(read_png(tmp_path / "b.png"), MISSING_COLOR)
    # 3 cells in each of the two maps, each cell about 90 x 90 pixels.
    assert a - b > 2 * 3 * 50 * 50


def test_highlighted_nodes_are_marked(tmp_path):
    m = rack_model()
    plot_model(m, tmp_path / "plain.png")
    plot_model(m, tmp_path / "marked.png", highlight=[3, 5, 20, 21, 40])
    plain = pixels_near(read_png(tmp_path / "plain.png"), HIGHLIGHT_COLOR)
    marked = pixels_near(read_png(tmp_path / "marked.png"), HIGHLIGHT_COLOR)
    assert marked > plain + 200


def test_bad_highlight_index(tmp_path):
    with pytest.raises(RankwiseError, match="highlight: node index 64"):
        plot_model(rack_model(), tmp_path / "x.png", highlight=[1, 64])
    assert not (tmp_path / "x.png").exists()


def test_missing_folders_are_made_as_for_every_output(tmp_path):
    """A plot follows the -o rules of every output (rankwise.util.files.prepare_output)."""
    path = tmp_path / "no" / "such" / "dir" / "heat.png"
    plot_model(rack_model(racks=2, per_rack=2, missing=()), path)
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_a_folder_that_cannot_be_made_is_a_one_line_error(tmp_path):
    (tmp_path / "file").write_text("x")
    path = tmp_path / "file" / "heat.png"
    with pytest.raises(RankwiseError) as err:
        plot_model(rack_model(racks=2, per_rack=2, missing=()), path)
    text = str(err.value)
    assert "\n" not in text
    assert str(path) in text and "Not a directory" in text


def test_directory_as_path_is_an_error(tmp_path):
    with pytest.raises(RankwiseError, match="is a directory"):
        plot_model(rack_model(racks=2, per_rack=2, missing=()), tmp_path)


def test_large_model_names_only_some_nodes(tmp_path):
    n = 512
    starts = list(range(0, n, 32))
    labelled = label_positions(n, starts, marked=[77, 300])
    assert len(labelled) <= MAX_LABELS
    assert {77, 300} <= set(labelled)  # highlighted nodes are named first
    gaps = np.diff(labelled)
    assert gaps.min() >= 0.7 * n / (MAX_LABELS * 0.8) - 1
    assert label_positions(12, [0, 6], []) == list(range(12))

    m = rack_model(racks=16, per_rack=32, missing=[(300, j) for j in range(n) if j != 300])
    plot_model(m, tmp_path / "big.png", highlight=[77, 300])
    read_png(tmp_path / "big.png")


def test_models_without_values_still_plot(tmp_path):
    plot_model(Model.empty(["a", "b", "c"], [8]), tmp_path / "empty.png")  # every pair unprobed
    read_png(tmp_path / "empty.png")
    plot_model(Model.empty(["solo"], [8]), tmp_path / "one.png")
    read_png(tmp_path / "one.png")
    with pytest.raises(RankwiseError, match="no nodes"):
        plot_model(Model.empty([], [8]), tmp_path / "none.png")
