"""Size presets: overrides, validation, and parameter counts that match the built model."""

from __future__ import annotations

import dataclasses

import pytest

from xtts_cli.config.schema import AcousticConfig, DataConfig
from xtts_cli.errors import ConfigError
from xtts_cli.model.presets import PRESETS, ModelDims, estimate_param_count, resolve_dims

VOCAB_SIZE = 64


def test_resolve_dims_applies_overrides_to_the_preset():
    dims = resolve_dims(AcousticConfig(model_size="small", d_model=192, num_heads=3, num_decoder_layers=1, dropout=0.2))
    assert isinstance(dims, ModelDims)
    assert (dims.d_model, dims.num_heads, dims.num_decoder_layers, dims.dropout) == (192, 3, 1, 0.2)
    assert dims.ffn_dim == 4 * 192
    assert dims.num_text_layers == PRESETS["small"].num_text_layers


def test_resolve_dims_without_overrides_is_the_preset():
    assert resolve_dims(AcousticConfig(model_size="normal")) == PRESETS["normal"]


def test_d_model_not_divisible_by_heads_names_both_values():
    with pytest.raises(ConfigError) as raised:
        resolve_dims(AcousticConfig(model_size="tiny", d_model=100, num_heads=3))
    message = str(raised.value)
    assert "d_model (100)" in message and "num_heads (3)" in message


def test_dims_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["tiny"].d_model = 7  # type: ignore[misc]


def test_preset_sizes_are_ordered_and_tiny_fits_a_cpu():
    counts = [
        estimate_param_count(PRESETS[name], n_mels=80, vocab_size=VOCAB_SIZE)
        for name in ("tiny", "small", "normal", "big")
    ]
    assert counts == sorted(counts) and len(set(counts)) == 4
    assert 500_000 <= counts[0] <= 1_500_000
    assert counts[-1] >= 100_000_000


@pytest.mark.parametrize(
    "model_cfg",
    [
        AcousticConfig(model_size="tiny"),
        AcousticConfig(model_size="tiny", decoder="duration"),
    ],
    ids=["tiny", "tiny-duration"],
)
def test_estimated_param_count_matches_the_built_model(model_cfg):
    # The larger presets are only counted analytically (building `big` takes ~15 s); this keeps
    # the formula honest.
    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.kinds import kind_for
    from xtts_cli.model.build import build_model

    data_cfg = DataConfig(n_mels=40)
    network = kind_for(XttsConfig(model=model_cfg.model_dump())).network_class()  # the config's kind's network
    model = build_model(model_cfg, data_cfg, VOCAB_SIZE, network=network)
    estimate = estimate_param_count(resolve_dims(model_cfg), n_mels=40, vocab_size=VOCAB_SIZE, paced=model.paced)
    assert model.count_params() == estimate


def test_a_size_written_out_as_its_preset_has_it_is_the_same_network_to_resume_and_to_adapt(tmp_path):
    from pathlib import Path

    from xtts_cli.config.schema import XttsConfig
    from xtts_cli.errors import XttsError
    from xtts_cli.run.directory import changed_settings, prepare_run_dir
    from xtts_cli.training.parent import open_parent

    run, resumed = prepare_run_dir(tmp_path / "run", XttsConfig(model={"model_size": "tiny"}))
    run.checkpoints.mkdir(parents=True)
    (run.checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    tiny = PRESETS["tiny"]
    written_out = {"model_size": "tiny", "d_model": tiny.d_model, "num_heads": tiny.num_heads}
    assert prepare_run_dir(tmp_path / "run", XttsConfig(model=written_out))[1]  # resumes
    with pytest.raises(XttsError, match=rf"changed: model.d_model \({tiny.d_model} -> 64\)"):
        prepare_run_dir(tmp_path / "run", XttsConfig(model={**written_out, "d_model": 64}))
    # A regulariser has no weight: a resume may change it, and it is said among the changed settings.
    regularised = XttsConfig(model={**written_out, "dropout": 0.3, "decoder_input_noise": 0.5})
    assert prepare_run_dir(tmp_path / "run", regularised)[1]
    said = changed_settings(XttsConfig(model=written_out), regularised)
    assert "model.dropout (0.1 -> 0.3)" in said and "model.decoder_input_noise (0.0 -> 0.5)" in said
    # A base whose config wrote its sizes out (d_model 32, 2 heads on tiny) takes a config that leaves
    # the heads to the preset, which has 2.
    base = open_parent(Path(__file__).parent / "data" / "run_before_run_data")
    model = base.config.model.model_dump(exclude={"num_heads"})
    assert base.config.model.num_heads == tiny.num_heads and model["d_model"] != tiny.d_model
    assert base.refusal(base.config.model_copy(update={"model": type(base.config.model)(**model)})) is None
    assert "model.d_model 32 -> 128" in base.refusal(
        base.config.model_copy(update={"model": type(base.config.model)(**{**model, "d_model": None})})
    )
