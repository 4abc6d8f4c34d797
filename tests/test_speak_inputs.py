"""What a user hands `xtts synthesize`, `vocode`, `export` and `serve` besides the words: where the
output goes, a text file as an editor saves it, characters pasted with the text, a pace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from xtts_cli.cli.app import app
from xtts_cli.errors import XttsError

RUN = Path(__file__).parent / "data" / "run_before_run_data"  # an autoregressive run of 3 steps


@pytest.mark.parametrize(
    "args, message",
    [
        (["-o", "/proc/x.wav"], "--out /proc/x.wav: nothing can be written in /proc"),
        (["-o", "{tmp}"], "--out {tmp} is a folder"),
        (["-o", "{tmp}/a-file/x.wav"], "--out {tmp}/a-file/x.wav: {tmp}/a-file is a file, not a folder"),
        (["--text-file", "{tmp}/lines.txt", "--out-dir", "{tmp}/a-file"], "--out-dir {tmp}/a-file is a file"),
        (["--text-file", "{tmp}", "--out-dir", "{tmp}/clips"], "--text-file {tmp} cannot be read (Is a directory)"),
        (["--text-file", "{tmp}/lines.txt", "-o", "/proc/x.wav"], "--out /proc/x.wav: nothing can be written in /proc"),
        (
            ["--text-file", "{tmp}/lines.txt", "-o", "mine.wav", "--out-dir", "{tmp}/clips"],
            "--out mine.wav and --out-dir {tmp}/clips both say where the speech goes",
        ),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line_before_the_run_loads(runner, tmp_path, args, message):
    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    (tmp_path / "lines.txt").write_text("Hello.\n", encoding="utf-8")
    args = [arg.format(tmp=tmp_path) for arg in args]
    text = [] if "--text-file" in args else ["Hello."]
    result = runner.invoke(app, ["synthesize", *text, "-r", str(RUN), *args])
    assert isinstance(result.exception, XttsError), result.output
    assert len(result.exception.lines) == 1 and result.exception.lines[0].startswith(message.format(tmp=tmp_path))
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "mine" and not (tmp_path / "clips").exists()


def test_a_text_file_names_each_line_that_is_not_utf8_and_passes_over_lines_blank_to_the_eye(runner, tmp_path):
    from xtts_cli.cli.synthesize import _read_lines

    lines = tmp_path / "lines.txt"  # `cat` of files Notepad saved: a byte-order mark on a line of its own
    lines.write_bytes("\ufeffHello there.\n\ufeff\n\u200b \r\nBye.\n".encode("utf-8"))
    assert _read_lines(lines) == [(1, "Hello there."), (4, "Bye.")]
    latin = b"Hello.\nCaf\xe9 au lait.\nFine.\nNa\xefve.\n"  # Latin-1, piped in as --text-file -
    result = runner.invoke(
        app, ["synthesize", "--text-file", "-", "--out-dir", str(tmp_path / "clips"), "-r", str(RUN)], input=latin
    )
    assert result.exception.lines == ["--text-file - is not UTF-8 text: lines 2, 4 (the first at byte 10)"]
    assert not (tmp_path / "clips").exists()


def test_a_text_file_in_utf16_or_with_old_mac_line_ends_is_read_and_a_binary_one_named():
    # Notepad's "Unicode" (UTF-16 with its mark) had been refused with a Latin-1 hint; a file whose lines
    # end in a carriage return alone (old Macs) had been one line; audio said "not UTF-8: line 1".
    from xtts_cli.cli.synthesize import _read_lines

    text = "The cat sat.\r\nA second line.\n"
    expected = [(1, "The cat sat."), (2, "A second line.")]
    for encoding in ("utf-16", "utf-16-be", "utf-32"):
        raw = text.encode(encoding)
        raw = raw if encoding != "utf-16-be" else b"\xfe\xff" + raw
        Path(f"{encoding}.txt").write_bytes(raw)
        assert _read_lines(Path(f"{encoding}.txt")) == expected, encoding
    Path("mac.txt").write_bytes(b"The cat sat.\rA second line.\r")
    assert _read_lines(Path("mac.txt")) == expected
    Path("clip.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00")
    with pytest.raises(XttsError) as caught:
        _read_lines(Path("clip.wav"))
    assert caught.value.lines == [
        "--text-file clip.wav is not a text file: it holds NUL bytes (audio or another "
        "binary file, or UTF-16 without its byte-order mark)"
    ]
    # UTF-16 without its mark, named with its byte order: iconv of the other order makes nonsense of it.
    for written, encoding, order in (
        (text, "utf-16-le", "little-endian"),
        (text, "utf-16-be", "big-endian"),
        ("Привет, мир.\nКак дела?\n", "utf-16-le", "little-endian"),
        ("你好，世界。\n今天 天气 很好。\n", "utf-16-be", "big-endian"),
    ):
        Path("bare.txt").write_bytes(written.encode(encoding))
        with pytest.raises(XttsError) as caught:
            _read_lines(Path("bare.txt"))
        assert caught.value.lines == [f"--text-file bare.txt is UTF-16 ({order}) without its byte-order mark"]
        assert f"iconv -f utf-16{order[0]}e -t utf-8" in caught.value.hint


def test_a_text_file_with_no_end_is_refused_as_it_is_read_not_read_whole(runner, tmp_path):
    # /dev/zero as --text-file had been read whole into memory until the kernel killed xtts (and
    # whatever else it chose); more text than a synthesis reads is refused at its cap.
    import subprocess
    import sys

    from xtts_cli.cli.synthesize import MOST_TEXT_BYTES, _read_lines

    with pytest.raises(XttsError) as caught:
        _read_lines(Path("/dev/zero"))
    assert caught.value.lines[0].startswith("--text-file /dev/zero is not a text file: it holds NUL bytes")
    producer = subprocess.Popen(["yes", "The cat sat."], stdout=subprocess.PIPE)
    try:
        endless = subprocess.run(
            [sys.executable, "-m", "xtts_cli", "synthesize", "-", "-r", str(RUN), "-o", str(tmp_path / "z.wav")],
            stdin=producer.stdout,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        producer.kill()
        producer.wait()
        producer.stdout.close()
    assert endless.returncode == 1 and endless.stderr.startswith(
        f"error: TEXT - holds over {MOST_TEXT_BYTES >> 20} MiB: more text than one synthesis reads"
    ), endless.stderr
    assert not (tmp_path / "z.wav").exists()


def test_a_folder_where_a_clip_or_the_index_goes_is_refused_before_any_is_written(runner, tmp_path):
    (tmp_path / "lines.txt").write_text("Hello.\nBye.\n", encoding="utf-8")
    clips = tmp_path / "clips"
    (clips / "0002.wav").mkdir(parents=True)
    (clips / "index.jsonl").mkdir()
    result = runner.invoke(
        app, ["synthesize", "--text-file", str(tmp_path / "lines.txt"), "--out-dir", str(clips), "-r", str(RUN)]
    )
    assert result.exception.lines == [f"--out-dir {clips}: 0002.wav, index.jsonl are folders there, where a file goes"]
    assert sorted(path.name for path in clips.iterdir()) == ["0002.wav", "index.jsonl"]
    sample = Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs"
    first, second = sorted(sample.glob("*.wav"))[:2]
    (clips / first.name).mkdir()
    for args, message in (
        ([str(first), str(second), "--out-dir", str(clips)], f"--out-dir {clips}: {first.name} is a folder there"),
        ([str(first), "--out-dir", "-"], "--out-dir - names a folder, not stdout"),
        ([str(first), "-o", "-"], "--out -: vocode writes its audio to a file, not stdout"),
    ):
        result = runner.invoke(app, ["vocode", *args])
        assert isinstance(result.exception, XttsError) and result.exception.lines[0].startswith(message), args
    assert not (clips / second.name).exists() and not Path("-").exists()


def test_text_from_stdin_must_be_piped_utf8(runner, tmp_path):
    import os
    import pty
    import subprocess
    import sys

    result = runner.invoke(app, ["synthesize", "-", "-r", str(RUN)], input=b"caf\xe9")
    assert result.exception.lines == ["the text on stdin is not UTF-8 text: line 1 (the first at byte 3)"]
    result = runner.invoke(app, ["synthesize", "-", "-r", str(RUN)], input=b" \n")
    assert result.exception.lines == ["the text to synthesise is empty"]
    # A terminal on stdin: said at once, not waited on.
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "xtts_cli", "synthesize", "-", "-r", str(RUN)],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 1 and "error: TEXT - reads the text from stdin, which is a terminal here" in done.stderr


def test_an_export_and_a_vocoding_to_a_place_that_cannot_be_written_are_refused_first(runner, tmp_path):
    exported = runner.invoke(app, ["export", "-r", str(RUN), "-o", "/proc/exported"])
    assert exported.exception.lines == [
        "--out /proc/exported: nothing can be written in /proc (No such file or directory)"
    ]
    clip = Path(__file__).parent / "data" / "corpora" / "ljspeech2" / "wavs" / "LJ001-0000.wav"
    vocoded = runner.invoke(app, ["vocode", str(clip), "--out-dir", str(clip)])
    assert vocoded.exception.lines == [f"--out-dir {clip} is a file"]


def test_a_pace_that_is_not_a_number_is_a_usage_error(runner, tmp_path):
    result = runner.invoke(
        app, ["synthesize", "Hello.", "-r", str(RUN), "--speed", "nan", "-o", str(tmp_path / "a.wav")]
    )
    assert result.exit_code == 2 and "nan is not a pace" in result.output


def test_invisible_and_control_characters_pasted_with_a_text_are_left_out_not_refused():
    from xtts_cli.data.text import Tokenizer

    tokenizer = Tokenizer("abcdefghijklmnopqrstuvwxyz .", ["english_cleaners"])
    prepared = tokenizer.prepare("to\u00adday\u200b is\x00fine.\ufeff")
    spoken, left_out = tokenizer.speakable(prepared)
    # A soft hyphen or a zero-width space joins its neighbours; a control character parts them.
    assert spoken == "today is fine." and set(left_out) == {"\u00ad", "\u200b", "\x00", "\ufeff"}
    assert tokenizer.symbol_ids(spoken)
    # Combining marks over each letter (strike-through text pasted from a chat) are left out, the letters read.
    spoken, left_out = tokenizer.speakable(tokenizer.prepare("H\u0337e\u0335l\u0336l\u0334o\u0338 there."))
    assert spoken == "hello there." and set(left_out) == {"\u0334", "\u0335", "\u0336", "\u0337", "\u0338"}


def test_a_letter_only_the_reading_of_a_date_brought_in_is_shown_where_it_was_read():
    from xtts_cli.data.text import UnknownCharactersError

    text = "I paid on 2024-01-05 and left."
    error = UnknownCharactersError(
        ["j"], text, reads="en", prepared="i paid on the fifth of january, twenty twenty four and left."
    )
    assert error.hint.startswith(f"in {text!r}, read as '") and "january" in error.hint
    long = "The cat sat on the mat and we walked to the market in the morning light, then we saw a big zebra."
    shown = UnknownCharactersError(["z"], long, reads="en", prepared=long.lower()).hint
    assert shown.startswith("in '...") and "zebra" in shown  # where the letter stands, not the first 60 characters
    # A Persian word's zero-width non-joiner is shown as the word is written; a zero-width space escaped.
    persian = UnknownCharactersError(["P"], "با Python کار می\u200cکنم.", reads="fa", prepared="").hint
    assert "می\u200cکنم" in persian and "\\u200c" not in persian
    assert "\\u200b" in UnknownCharactersError(["x"], "a\u200bx", reads="en", prepared="").hint


def test_a_paced_window_holds_each_tokens_rounded_frames_at_every_speed():
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.run.files import SpeakingRate
    from xtts_cli.speech.synthesis import _frame_window

    data, model = DataConfig(), SimpleNamespace(paced=True)
    rate = SpeakingRate(clips=40, p10=4.0, median=5.5, p90=6.0)
    for symbols in (3, 14, 60):
        _, most = _frame_window(model, symbols, data, rate, 1.0, None)
        for speed in (1.5, 2.0, 3.0, 4.0):
            # Every token at its share of the window at pace 1, divided and rounded as the duration
            # decoder rounds them (half to even, as tf.round): the sentence still ends by its durations.
            frames = int(np.round(np.full(symbols, most / symbols) / speed).sum())
            assert frames <= _frame_window(model, symbols, data, rate, speed, None)[1], (symbols, speed)


def test_a_run_directory_that_is_not_there_is_named_so(tmp_path):
    from xtts_cli.run.files import read_run

    with pytest.raises(XttsError) as missing:
        read_run(tmp_path / "nowhere")
    assert missing.value.lines == [f"--run-dir {tmp_path / 'nowhere'} does not exist"]


def test_a_checkpoint_or_an_export_given_as_a_run_is_named_for_what_it_is(tmp_path):
    import tensorflow as tf

    from xtts_cli.run.files import read_run

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("", encoding="utf-8")
    saved = tf.train.Checkpoint(step=tf.Variable(10)).save(str(run / "checkpoints" / "ckpt"))  # ckpt-1
    said = f"of the run {run}: --run-dir takes the run directory, which speaks with its latest checkpoint"
    for given in (Path(saved), Path(saved + ".index"), run / "checkpoints"):
        with pytest.raises(XttsError) as wrong:
            read_run(given)
        what = "holds checkpoints" if given.is_dir() else "is a checkpoint"
        assert wrong.value.lines == [f"{given} {what} {said}"], given
        # A checkpoint of its own is one --step speaks with.
        assert wrong.value.hint == f"pass --run-dir {run}" + ("" if given.is_dir() else " --step 1 (this checkpoint)")
    # --step picks the acoustic run's checkpoint: not said of a vocoder's.
    with pytest.raises(XttsError) as vocoder:
        read_run(Path(saved), "--vocoder")
    assert vocoder.value.hint == f"pass --vocoder {run}"
    export = tmp_path / "export"
    export.mkdir()
    (export / "export.json").write_text("{}", encoding="utf-8")
    with pytest.raises(XttsError) as exported:
        read_run(export)
    assert exported.value.lines[0].startswith(f"{export} is an `xtts export` folder, not a run directory")
    assert exported.value.hint == "pass --run-dir the directory of an `xtts train` run, e.g. runs/tiny-cpu"
    # One that names the run it was made from, still there, points to it ("e.g. runs/tiny-cpu" had been said).
    (export / "export.json").write_text(json.dumps({"run": str(run)}), encoding="utf-8")
    with pytest.raises(XttsError) as exported:
        read_run(export, "--init-from")
    assert exported.value.hint == f"pass --init-from {run}, the run it was exported with"
    # Given as --vocoder, its vocoder run (the acoustic one it names is no vocoder); none: the hint as it was.
    with pytest.raises(XttsError) as exported:
        read_run(export, "--vocoder")
    assert exported.value.hint.startswith("pass --vocoder the directory of an `xtts train -c vocoder-cpu` run")
    (export / "export.json").write_text(json.dumps({"run": str(run), "vocoder": str(run)}), encoding="utf-8")
    with pytest.raises(XttsError) as exported:
        read_run(export, "--vocoder")
    assert exported.value.hint == f"pass --vocoder {run}, the vocoder it was exported with"


@pytest.mark.slow
def test_a_text_file_saved_with_a_byte_order_mark_and_a_form_feed_speaks_by_its_line_numbers(tmp_path):
    import json

    from training_support import run_xtts

    lines = tmp_path / "lines.txt"
    lines.write_bytes("\ufeffThe kettle is on.\r\n\r\nThe bus\x0cwas late.\nRain fell.\n".encode("utf-8"))
    clips = tmp_path / "clips"
    clips.mkdir()
    (clips / "0009.wav").write_bytes(b"an earlier call's clip")
    (clips / "0003.wav").write_bytes(b"an earlier call's clip")
    # --max-frames holds for each clip as for one text (it had been dropped: clips of 6 s for 20 frames).
    # --out-dir as a user types it, relative: index.jsonl names each clip so it is found from anywhere.
    command = ["synthesize", "--text-file", str(lines), "--out-dir", "clips", "-r", str(RUN), "--max-frames", "8"]
    done = run_xtts(command, tmp_path)
    assert done.returncode == 0, done.stderr
    index = [json.loads(line) for line in (clips / "index.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["line"], Path(r["out"]).name) for r in index] == [(1, "0001.wav"), (3, "0003.wav"), (4, "0004.wav")]
    assert all(Path(r["out"]).is_absolute() and Path(r["out"]).is_file() for r in index)  # read from anywhere
    assert all(r["seconds"] <= 8 * 256 / 22050 for r in index), index  # 8 frames of the run's hop
    assert index[0]["text"] == "The kettle is on." and index[1]["text"] == "The bus\x0cwas late."  # no BOM spoken
    # Each clip the limit cut is said to be, as one text's "ended by" says it (a clip of one part had not been).
    cut = sum(record["ended_by"] == "length limit" for record in index)
    assert cut and done.stderr.count("note: the length limit cut it short: the stop token never fired\n") == cut
    assert sum("the length limit cut it short: the stop token never fired" in r["notes"] for r in index) == cut
    assert "note: clips also holds 1 clip(s) this call did not write (0009.wav)" in done.stderr
    assert "note: 1 file(s) in clips are written over (0003.wav)" in done.stderr
    assert f"of {RUN}, vocoder griffin-lim; clips/index.jsonl lists them" in done.stdout
    again = run_xtts([*command, "--json"], tmp_path)  # a script learns it too (said on stderr alone, it had not)
    summary = json.loads(again.stdout)
    assert summary["written_over"] == ["0001.wav", "0003.wav", "0004.wav"] and summary["earlier_clips"] == ["0009.wav"]


@pytest.mark.slow  # a process loads a run and speaks until it is stopped
@pytest.mark.parametrize(
    "stop, code",
    [("SIGINT", 130), pytest.param("SIGTERM", 143, marks=pytest.mark.slow)],  # SIGTERM: a scheduler, `timeout`
)
def test_ctrl_c_in_a_text_file_keeps_an_index_of_the_clips_written_and_says_how_far_it_got(tmp_path, stop, code):
    import json
    import signal
    import time

    from training_support import start_xtts

    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"Sentence {n}, spoken clearly.\n" for n in range(1, 301)), encoding="utf-8")
    clips = tmp_path / "clips"
    process = start_xtts(
        ["synthesize", "--text-file", str(lines), "--out-dir", str(clips), "-r", str(RUN)], tmp_path, ctrl_c=True
    )
    deadline = time.monotonic() + 240
    while not (clips / "0003.wav").exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    process.send_signal(getattr(signal, stop))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    index = [json.loads(line) for line in (clips / "index.jsonl").read_text(encoding="utf-8").splitlines()]
    written = sorted(path.name for path in clips.glob("*.wav"))
    # Each clip it lists is there (one saved as the Ctrl-C came may not be listed yet: 0003.wav, seen, at most).
    assert 2 <= len(index) < 300 and len(written) - len(index) <= 1
    assert [Path(r["out"]).name for r in index] == written[: len(index)]
    assert f"note: interrupted after {len(index)} of 300 lines; {clips / 'index.jsonl'} lists the clips written" in (
        stderr
    )


@pytest.mark.slow  # a process loads a run and speaks until it is stopped
def test_ctrl_c_while_one_text_is_spoken_says_nothing_was_written_and_keeps_the_file_there(tmp_path):
    import signal
    import wave

    from training_support import start_xtts

    earlier = tmp_path / "speech.wav"
    with wave.open(str(earlier), "wb") as clip:  # an earlier call's
        clip.setnchannels(1), clip.setsampwidth(2), clip.setframerate(22050), clip.writeframes(b"\x01\x00" * 2205)
    before = earlier.read_bytes()
    text = " ".join(f"Sentence {n} is spoken clearly and slowly." for n in range(1, 80))
    process = start_xtts(["synthesize", text, "-r", str(RUN), "-o", str(earlier)], tmp_path, ctrl_c=True)
    said = ""
    while "speaking" not in said and process.poll() is None:
        said += process.stderr.readline()  # type: ignore[union-attr]
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, said + stderr
    assert f"interrupted (Ctrl-C): nothing written; the {earlier} there is as it was" in stderr
    assert earlier.read_bytes() == before


def test_a_call_stopped_before_its_first_clip_says_it_wrote_none(tmp_path):
    from xtts_cli.cli.synthesize import _index_on_stop, interrupted_after

    # It had named an index.jsonl that was never written, in a folder never made.
    clips = tmp_path / "clips"
    _index_on_stop(clips, [])
    assert interrupted_after(clips, 0, 30) == "interrupted after 0 of 30 lines; no clip written"
    assert not (clips / "index.jsonl").exists()
    clips.mkdir()
    (clips / "0001.wav").write_bytes(b"")
    earlier = {"line": 1, "text": "One.", "out": str(clips / "0001.wav")}
    (clips / "index.jsonl").write_text(json.dumps(earlier) + "\n", encoding="utf-8")
    _index_on_stop(clips, [])
    assert interrupted_after(clips, 0, 30) == (
        f"interrupted after 0 of 30 lines; no clip written; {clips / 'index.jsonl'} lists an earlier call's"
    )
    assert interrupted_after(clips, 2, 30).endswith(f"{clips / 'index.jsonl'} lists the clips written")


def test_an_emoji_or_a_control_character_is_left_out_and_named_not_read_aloud_by_espeak_ng():
    from xtts_cli.data.text import Tokenizer, prepare_texts, without_unspoken

    def phonemes(text: str) -> str:
        return prepare_texts([text], ["english_cleaners"], "phonemes", "en")[0]

    # espeak-ng reads "❤" as "red", a flag as its country, and stops its text at a NUL.
    assert phonemes("I ❤️ you.") == phonemes("I you.") and phonemes("my 🇺🇸 flag") == phonemes("my flag")
    assert phonemes("hi\x00there") == phonemes("hi there")
    assert phonemes("great 👍🏽") == phonemes("great")  # a skin tone is no word ("medium skin tone")
    assert phonemes("25°") == phonemes("25 degrees")  # a sign espeak-ng reads as a word stays
    assert without_unspoken("می\u200cخواهم") == "می\u200cخواهم"  # Persian writes a non-joiner inside a word
    tokenizer = Tokenizer(sorted(set(phonemes("I you. hi there"))), ["english_cleaners"], frontend="phonemes")
    ids, left_out = tokenizer.spoken_ids("I ❤️ you. hi\x00there.", None)
    assert ids and left_out == ["\x00", "\u2764", "\ufe0f"]
    # A text that is only an emoji, among others: empty, and the others each its own (espeak-ng's
    # wrapper dropped it from its answer, moving every later transcript onto the clip before it).
    many = prepare_texts(["hello", "😀", "", "world"], ["english_cleaners"], "phonemes", "en")
    assert many == [phonemes("hello"), "", "", phonemes("world")]
    # One it answered in two pieces (digits left to espeak-ng, as runs before numbers were read as words):
    # one text, its pieces joined, and the next text its own.
    prices = "It costs $1,999.50 on 12/25/2020."
    old = prepare_texts([prices, "world"], ["english_cleaners"], "phonemes", "en", "characters")
    assert len(old) == 2 and old[1] == phonemes("world") and "fˈɪfti" in old[0] and "slˈæʃ" in old[0]


def test_a_sentence_that_is_only_an_emoji_joins_the_one_before_it_to_be_left_out():
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.data.text import Tokenizer, prepare_texts
    from xtts_cli.speech.synthesis import check_text, text_parts

    symbols = sorted(set(prepare_texts(["great job. see you soon. hi."], ["english_cleaners"], "phonemes", "en")[0]))
    tokenizer = Tokenizer(symbols, ["english_cleaners"], frontend="phonemes", languages=["en"])
    data = DataConfig()
    assert text_parts(tokenizer, "Great job! 👍", data, None, language="en") == ["Great job! 👍"]
    assert text_parts(tokenizer, "★ Hi. See you soon. ❤️", data, None, language="en") == ["★ Hi.", "See you soon. ❤️"]
    with pytest.raises(XttsError, match="nothing left after cleaning") as alone:
        check_text(tokenizer, "😀 ♪", data, None, language="en")
    assert alone.value.hint == "emoji and symbols are not read aloud: write what they say in words"
    # Zero-width spaces alone are no emoji: nothing is seen at all (a paste that lost its words).
    with pytest.raises(XttsError, match="nothing left after cleaning") as unseen:
        check_text(tokenizer, "\u200b\u200b", data, None, language="en")
    assert unseen.value.hint.startswith("it holds only characters that are not seen (zero-width spaces")
    # Punctuation with them, or alone, says nothing either: refused, not spoken as a noise.
    for text in ("👍!", "😀. 😀.", "???!!!...", ","):
        with pytest.raises(XttsError, match="nothing left after cleaning"):
            check_text(tokenizer, text, data, None, language="en")
    with pytest.raises(XttsError) as long:  # a file of NULs is named by its start, not echoed whole
        check_text(tokenizer, "\x00" * 100_000, data, None, language="en")
    assert long.value.lines == [f"the text {chr(0) * 60 + '...'!r} has nothing left after cleaning"]


def test_a_phoneme_the_runs_data_never_held_is_read_as_its_nearest_or_left_out():
    from xtts_cli.data.text import Tokenizer

    tokenizer = Tokenizer(list("abdeszʃ ,.ˈə"), ["basic_cleaners"], frontend="phonemes", languages=["ru"])
    # Russian ɕ as ʃ, ʑ (no ʒ either) as z; ɣ, with no neighbour known, and the length mark left out.
    spoken, said = tokenizer.speakable("ɕˈaʑə, ɣː sab.")
    assert spoken == "ʃˈazə, sab." and said == ["ɕ→ʃ", "ɣ", "ʑ→z", "ː"]
    assert tokenizer.symbol_ids(spoken)
    # A characters vocabulary reads no letter as another: a letter it lacks is still refused.
    letters = Tokenizer(list("abdes "), ["basic_cleaners"], languages=["en"])
    assert letters.speakable("ʃab") == ("ʃab", [])


@pytest.mark.parametrize(
    "characters, text, says",
    [
        (["θ"], "Θέλω φαγητό.", "its data never held these letters of its script"),
        (["3", "7"], "Έχω 37 βιβλία.", "the run reads the digits of el as characters"),
        (["ж"], "жук", "the run reads en, el: pass text in it"),
    ],
)
def test_what_the_run_lacks_is_said_as_what_it_is(characters, text, says):
    from xtts_cli.data.text import Tokenizer, UnknownCharactersError

    tokenizer = Tokenizer(list("abέλωχγητόβι 25."), ["basic_cleaners"], languages=["en", "el"])
    error = UnknownCharactersError(
        characters,
        text,
        reads="en, el",
        own_script=tokenizer.of_its_scripts(characters),
        language="el",
        prepared=text.lower(),
    )
    assert says in error.hint


def test_a_sentence_cut_to_fit_is_cut_after_its_numbers_are_read():
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.speech.synthesis import text_parts

    tokenizer = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"], numbers="words")
    text = "Please send the forms and the two copies of the contract to the office by 3/4 so that we can file them."
    whole = tokenizer.reading(text, "en")
    assert "the third of april so" in whole
    for frames in (400, 200, 120):  # cut in 4, 8 and 16 parts
        parts = text_parts(tokenizer, text, DataConfig(max_mel_frames=frames), None, language="en")
        # Each part spoken as it is read: together, the whole sentence's reading, not "three quarters so".
        assert len(parts) > 2 and " ".join(tokenizer.reading(part, "en") for part in parts) == whole


def test_a_word_in_the_script_of_another_of_the_runs_languages_is_read_in_that_one():
    # A Persian word in an English sentence to a run of en and fa had been spelt out, each letter's
    # name said in English ("ˈæɹəbɪksˈiːn"); a Persian sentence with an e-mail address in it, its
    # Latin letters the more, had been told to read as English.
    from xtts_cli.data.text import Tokenizer, prepare_texts, reading_language

    def phonemes(text: str, language: str) -> str:
        return prepare_texts([text], ["multilingual_cleaners"], "phonemes", language)[0]

    built = [
        phonemes("The cat sat, and then it slept.", "en"),
        phonemes("سلام، من می\u200cخواهم فارسی صحبت کنم.", "fa"),
    ]
    tokenizer = Tokenizer.build(
        built, ["multilingual_cleaners"], frontend="phonemes", languages=["en", "fa"], prepared=True
    )
    text = "He said «سلام» to me."
    assert reading_language(tokenizer.languages, text, None) == (None, "'سلام' read as fa")
    assert [reads for _, reads in tokenizer.stretches(text, None)] == ["en", "fa", "en"]
    # A number after the word is the sentence's (it had been said in Persian); between two Persian words, theirs.
    assert tokenizer.stretches("The word سلام 3 times.", None)[2] == ("3 times.", "en")
    assert tokenizer.stretches("Say سلام ۳ دوست now.", None)[1] == ("سلام ۳ دوست ", "fa")
    spoken = tokenizer.spoken(text, None)
    assert phonemes("سلام", "fa") in spoken and phonemes("He said", "en") in spoken and "ɹəbɪk" not in spoken
    persian = "سلام دوست من."
    assert tokenizer.spoken(persian, "en") == phonemes(persian, "fa")  # asked as en, its words still Persian
    mailed = "ایمیل من ali@mail.com است."
    assert reading_language(tokenizer.languages, mailed, None) == (
        "fa",
        "read as fa, the run's language in Arabic script (--language picks another)",
    )
    assert reading_language(tokenizer.languages, mailed, "fa") == ("fa", "")
    assert tokenizer.spoken(mailed, "fa") == phonemes(mailed, "fa")  # its Latin words espeak-ng reads as English
    single = Tokenizer.build(
        [phonemes("The cat sat.", "en")], ["multilingual_cleaners"], frontend="phonemes", prepared=True
    )
    assert single.stretches(text, None) == [(text, None)]  # a run of one language reads it as before
    # What --json's read_as shows is what is spoken: the Persian stretch's number read in Persian.
    german = Tokenizer.build(
        ["er sagte hallo", "سلام دوست"], ["multilingual_cleaners"], languages=["de", "fa"], numbers="words"
    )
    shown = german.read_as("Er sagte سلام ۱۲۳ بار am 3. Mai.", "de")
    assert "صد و بیست و سه" in shown and "einhundert" not in shown and "dritten mai" in shown


def test_the_language_a_text_is_read_in_follows_its_script_when_none_is_asked():
    from xtts_cli.data.text import reading_language

    persian = "سلام، حال شما چطور است؟"
    assert reading_language(["en", "fa"], persian, None) == (
        "fa",
        "read as fa, the run's language in Arabic script (--language picks another)",
    )
    assert reading_language(["en", "fa"], "Hello 1999.", None) == (None, "")  # the run's first, as before
    assert reading_language(["en", "fa"], persian, "en") == (
        "en",
        "the text is in Arabic script, which en is not written in: its words are read as fa, in en's accent; pass "
        "--language fa for fa's own",
    )
    assert reading_language(["en", "de"], persian, None)[1].endswith("the run reads en, de")
    assert reading_language(["ru"], "Щука, съел.", "ru") == ("ru", "")
    # Mathematical bold letters are Latin, as the cleaners read them: "hello" had been called another script.
    assert reading_language(["en"], "\U0001d407\U0001d41e\U0001d425\U0001d425\U0001d428 world", None) == (None, "")
    # A word in another script inside a text in the run's: espeak-ng spells it letter by letter ("ˈɛm
    # ˈoː ˈɛs ..."), so it is named; Latin words it reads as English in any language, so they are not.
    assert reading_language(["en"], "I flew to «Москва» and Αθήνα.", None) == (
        None,
        "'Москва' (Cyrillic), 'Αθήνα' (Greek) not in a script en is written in: read letter by letter",
    )
    # Spanish and French ordinal marks are Latin's, not scripts of their own ("MASCULINE", "MODIFIER").
    assert reading_language(["es"], "Vivo en el 2º piso y ella en la 3ª.", None) == (None, "")
    assert reading_language(["fr"], "Le 1ᵉʳ mai.", None) == (None, "")
    # A characters run reads a letter its vocabulary holds as it is (λ learnt by an adapted run), and
    # refuses the others: no espeak-ng spells them, so no note says it (it had said so of λ).
    assert reading_language(["en"], "I flew to «Москва» and Αθήνα.", None, phonemes=False) == (None, "")
    assert reading_language(["en", "fa"], "سلام London دوست", None)[1] == (
        "read as fa, the run's language in Arabic script (--language picks another)"
    )
    # Another language in the first's script: its own letters say which (German numbers had been read
    # in English, without a word); a loanword's accent does not, and letters of two are said, not guessed.
    assert reading_language(["en", "de", "tr"], "Grüße aus Köln, ich habe 42 Äpfel.", None) == (
        "de",
        "read as de, the run's language with its letters ß ä ö ü (--language picks another)",
    )
    assert reading_language(["en", "de", "tr"], "Işık, saat 8'de 25 kişi.", None)[0] == "tr"
    assert reading_language(["en", "fr"], "I love the café downtown.", None) == (None, "")
    assert reading_language(["en", "de", "tr"], "Über Müller.", None) == (
        None,
        "its letters ü are those of de and tr, not of en: read as en (--language picks one)",
    )
    assert reading_language(["en", "de"], "Grüße aus Köln.", "en") == ("en", "")  # asked: as asked
    # Another script's letters are its script's to place: each sentence of "Hi. سلام." in its own.
    assert reading_language(["en", "fa"], "The bus was late. پسر توپ را می\u200cسازد. The cat sat.", None)[0] is None


@pytest.mark.parametrize("command", ["synthesize", "vocode"])
def test_an_audio_file_named_for_another_format_is_refused_before_the_work(runner, tmp_path, command):
    clip = Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs" / "XTTS001-0002.wav"
    first = ["Hello.", "-r", str(RUN)] if command == "synthesize" else [str(clip)]
    result = runner.invoke(app, [command, *first, "--out", str(tmp_path / "x.mp3")])
    assert isinstance(result.exception, XttsError), result.output
    assert result.exception.lines == [f"--out {tmp_path / 'x.mp3'}: xtts writes WAV audio"]
    assert (
        result.exception.hint
        == f"name it {tmp_path / 'x.wav'} (then convert it: sox {tmp_path / 'x.wav'} {tmp_path / 'x.mp3'})"
    )
    assert not (tmp_path / "x.mp3").exists()
    # A name that is no audio format (the text file, by a slip): only the WAV name, no conversion into it.
    result = runner.invoke(app, [command, *first, "--out", str(tmp_path / "lines.txt")])
    assert result.exception.hint == f"name it {tmp_path / 'lines.wav'}"
    # The command to paste is quoted: a space or a bracket in the name had split it (bash: syntax error).
    (tmp_path / "my out").mkdir()
    result = runner.invoke(app, [command, *first, "--out", str(tmp_path / "my out" / "v (2).flac")])
    wav, flac = tmp_path / "my out" / "v (2).wav", tmp_path / "my out" / "v (2).flac"
    assert result.exception.hint.endswith(f"(then convert it: sox '{wav}' '{flac}')")
    # A file named .wav that holds something else (notes saved under a slip of a name) is kept: the
    # audio had replaced it without a word.
    notes = tmp_path / "notes.wav"
    notes.write_text("my notes\n")
    result = runner.invoke(app, [command, *first, "--out", str(notes)])
    assert result.exception.lines == [f"--out {notes} exists and holds no WAV audio: writing would replace it"]
    assert notes.read_text() == "my notes\n"


@pytest.fixture(scope="module")
def tts():
    from xtts_cli.inference import Synthesizer

    return Synthesizer.load(RUN)


def test_a_terminals_colour_codes_and_markup_tags_are_left_out_and_named_not_read_aloud(tts, runner, tmp_path):
    # Pasted from a terminal, "ESC[31m" had been read "[thirty one m"; SSML's <break time="1s"/> "break time one s".
    text = 'The \x1b[31mred\x1b[0m cat. <break time="1s"/> It sat on <p>the</p> mat, un<i>dis</i>turbed.'
    notes = tts.check(text)
    assert notes == [
        "left out 2 terminal escape codes (colours, cursor moves, titles); left out the markup tags <break> <p> <i> "
        "(xtts reads plain text; the words between them are read)"
    ]
    # A one-byte escape (\x9b) and a title's (ESC ] ... BEL), and an HTML comment: none of them read.
    assert tts.check("The \x9b31mred\x9b0m cat.\x1b]0;my title\x07 <!-- a note --> It sat.") == [
        "left out 3 terminal escape codes (colours, cursor moves, titles); left out 1 markup comment (<!-- ... -->)"
    ]
    # A stage direction, as scripts for other TTS models write them: left out, not its word read aloud.
    assert tts.check("[Laughs] That was funny [clears throat]. [sic]") == [
        "left out the stage directions [laughs] [clears throat] (the model speaks words: it has no sound for them)",
        "left out what the run never saw: [ ]",
    ]
    from xtts_cli.data.text import without_markup

    assert without_markup("Hi, [laughs], bye [sighs].")[0] == "Hi, bye."
    with pytest.raises(XttsError) as alone:  # it had said "'' has nothing left", of zero-width spaces
        tts.check(" [sighs] ")
    assert alone.value.lines == [
        "the text '[sighs]' holds only stage directions ([sighs]): the model has no sound for them"
    ]
    # A comparison's signs are no tags: left out as signs the run never saw, its words read.
    assert tts.check("Is a<b and b>c, or a <b and c> d?") == ["left out what the run never saw: < >"]
    (tmp_path / "a.wav").write_bytes((Path(__file__).parent / "data" / "speech" / "sentence-0.wav").read_bytes())
    result = runner.invoke(app, ["synthesize", text, "-r", str(RUN), "-o", str(tmp_path / "a.wav"), "--json"])
    assert result.exit_code == 0, result.output
    import json

    said = json.loads(result.stdout)
    assert said["read_as"] == "the red cat. it sat on the mat, undisturbed."
    assert [note for note in said["notes"] if not note.startswith("the length limit cut")] == notes
    # Said when -o writes over a file, as --out-dir says of its clips (it had been silent).
    assert f"note: {tmp_path / 'a.wav'} is written over" in result.stderr


def test_read_as_says_what_was_read_not_what_was_left_out(tts):
    # It had shown the emoji the note said was left out, and "größe" read as "grosse".
    speech = tts.speak("The cat \U0001f600 sat in the café, größe!", max_frames=8)
    assert speech.read_as == "the cat sat in the cafe, grosse."
    assert any("\U0001f600" in note for note in speech.notes), speech.notes


def test_a_phonemes_runs_read_as_leaves_out_the_marks_it_left_out():
    # "«gut»" had been shown beside the note that « » were left out.
    from xtts_cli.data.text import Tokenizer, prepare_texts

    symbols = {*prepare_texts(["Es kostet zwölf Euro. Das ist gut!"], ["basic_cleaners"], "phonemes", "de")[0]}
    tokenizer = Tokenizer(sorted(symbols), ["basic_cleaners"], frontend="phonemes", languages=["de"])
    _, left_out = tokenizer.spoken_ids("Das ist «gut»!", "de")
    assert left_out == ["«", "»"] and tokenizer.read_as("Das ist «gut»!", "de", left_out) == "das ist gut!"
    # And shows a mark read as its nearest as the note names it ("!→.": it had been shown as typed).
    symbols = {*prepare_texts(["Es kostet zwölf Euro, das ist gut."], ["basic_cleaners"], "phonemes", "de")[0]}
    tokenizer = Tokenizer(sorted(symbols), ["basic_cleaners"], frontend="phonemes", languages=["de"])
    _, left_out = tokenizer.spoken_ids("Ja — das ist gut!", "de")
    # The phoneme j left out is none of the text's letters: "ja" had been shown as "a".
    assert {"\u2014\u2192,", "!\u2192.", "j"} <= set(left_out), left_out
    assert tokenizer.read_as("Ja — das ist gut!", "de", left_out) == "ja, das ist gut."
    for dash in ("\u2013", "-"):  # which espeak-ng reads as the em dash, spaced
        said = f"Ja {dash} das ist gut!"
        assert tokenizer.read_as(said, "de", tokenizer.spoken_ids(said, "de")[1]) == "ja, das ist gut.", dash


def test_the_window_a_clip_is_said_to_stop_in_is_measured_as_the_clip_is(tts, tmp_path):
    """N mel frames are N - 1 hops of audio: a clip stopped at the floor of its window had been
    reported one hop under that floor (1.22 s "at the floor" of 1.23-1.97 s)."""
    from xtts_cli.cli.synthesize import _report

    for text, sentences in (("The cat sat.", 1), ("The cat sat. A dog ran.", 2)):
        speech = tts.speak(text, max_frames=40)
        report = _report(tts, speech, tmp_path / "a.wav", speaker=None, language=None, voice="")
        hop_seconds = tts.config.data.hop_length / tts.config.data.sample_rate
        low, high = ((frames - sentences) * hop_seconds for frames in speech.frame_window)
        assert report["window_seconds"] == [round(low, 3), round(high, 3)]
        if sentences == 1:
            assert report["seconds"] == round((speech.frames - 1) * hop_seconds, 3)  # the same measure
    assert report["alignment_score"] is not None  # an autoregressive run's cross-attention: read


def test_the_python_api_refuses_what_the_command_line_refuses(tts):
    for speed in (0, -1, float("nan"), 100):
        with pytest.raises(XttsError, match="is not a pace from 0.25 to 4"):
            tts.speak("The cat sat.", speed=speed)
    import numpy as np

    wrong = (("fast", "'fast' is of type str"), ("1", "'1' is of type str"), (None, "None is of type NoneType"))
    for speed, says in (*wrong, (np.array(1.0), r"array\(1\.\) is of type ndarray")):
        with pytest.raises(XttsError, match=f"^speed {says}, not a number$"):  # "1" had been "no pace from 0.25 to 4"
            tts.speak("The cat sat.", speed=speed)
    for frames in (-5, 3.5, True):
        with pytest.raises(XttsError, match="is not a whole number of frames"):
            tts.speak("The cat sat.", max_frames=frames)
    with pytest.raises(TypeError, match="the text to speak is a str, not NoneType"):
        tts.speak(None)
    for wrong, says in (
        ({"speaker": 0}, "speaker is a name from .speakers, not int"),
        ({"language": 0}, "language is a code from .languages"),
        ({"speaker_wav": np.zeros(10)}, "speaker_wav is the path of a clip"),
    ):
        with pytest.raises(TypeError, match=says):
            tts.speak("The cat.", **wrong)
    with pytest.raises(XttsError, match="the text to synthesise is empty"):
        tts.check("  ")  # what speak would raise
    with pytest.raises(TypeError, match="speak_many takes a list of texts"):
        list(tts.speak_many("Hi."))
    with pytest.raises(TypeError, match="the text to speak is a str, not NoneType"):
        tts.check(None)  # as speak(None)
    with pytest.raises(TypeError, match=r"voice is what \.voice\(speaker=\.\.\.\) returns, not str"):
        tts.speak_parts("One.", voice="alice")
    from xtts_cli.inference import Synthesizer

    for step in ("2", 2.0, True):
        with pytest.raises(TypeError, match="step is the whole number of a checkpoint the run keeps"):
            Synthesizer.load(RUN, step=step)


def test_the_python_api_takes_numpy_numbers_and_any_path_and_refuses_at_the_call(tts, tmp_path, monkeypatch):
    from pathlib import PurePosixPath

    from xtts_cli.inference import Synthesizer, api

    # NumPy's numbers are numbers (they had been "speed np.float32(1.0) is not a pace from 0.25 to 4").
    speech = tts.speak("The cat.", speed=np.float32(1.0), max_frames=np.int64(40))
    assert 0 < speech.frames <= 40
    with pytest.raises(XttsError, match=r"^speed 9\.0 is not a pace"):
        tts.speak("The cat.", speed=np.float32(9))
    # Any os.PathLike names a run, a clip or a file (a PurePath had been "is no run directory").
    again = Synthesizer.load(PurePosixPath(RUN), step=np.int64(tts.step))
    assert again.step == tts.step
    with pytest.raises(XttsError, match=r"^speaker_wav '' is empty"):  # not "'.' cannot be read as audio"
        tts.speak("The cat.", speaker_wav="")
    assert speech.save(PurePosixPath(tmp_path / "a.wav")).is_file()
    with pytest.raises(TypeError, match="path is where the WAV goes"):
        speech.save(None)
    with pytest.raises(XttsError, match="the path is empty"):
        speech.save("")
    with pytest.raises(TypeError, match="speak_many takes a list of texts, not NoneType"):
        tts.speak_many(None)  # at the call, not at the first next()
    # speak_parts refuses at the call as speak does (a server checks before its 200), not at next().
    for wrong, says in (
        ({"speed": 9}, r"^speed 9\.0 is not a pace"),
        ({"language": "xx"}, "this model was not trained on 'xx'"),
        ({"text": "\u65e5\u672c."}, "text has characters the run was not trained on"),
    ):
        with pytest.raises(XttsError, match=says):
            tts.speak_parts(**{"text": "Hi.", **wrong}, voice=tts.voice())
    with pytest.raises(XttsError, match=r"^speed 1\.5: this run's decoder \(autoregressive\)"):
        tts.check("Hi.", speed=1.5)  # what speak would raise
    # speak_many checks every text before speaking the first, and names each bad one by its index.
    with pytest.raises(XttsError) as refused:
        tts.speak_many(["The cat.", "", "\u65e5\u672c.", "The dog \u65e5."])
    assert [line.split(":")[0] for line in refused.value.lines] == ["texts[2]", "texts[3]"]
    with pytest.raises(TypeError, match=r"^texts\[1\]: the text to speak is a str, not NoneType"):
        tts.speak_many(["The cat.", None])
    # What is wrong with every text (a language, a speed) is said once, as speak says it; an unknown
    # speaker and a misspelt argument at the call too (they had waited for the first text's turn).
    with pytest.raises(XttsError) as language:
        tts.speak_many(["The cat.", "The dog."], language="xx")
    assert language.value.lines == [language.value.lines[0]] and "language: this model was not trained on 'xx'" in str(
        language.value
    )
    with pytest.raises(XttsError, match="speaker 'nobody' is not"):
        tts.speak_many(["The cat."], speaker="nobody")
    with pytest.raises(TypeError, match="unexpected keyword argument 'speakr'"):
        tts.speak_many(["The cat."], speakr="nobody")
    with pytest.raises(TypeError, match="^language is a code from .languages"):  # not texts[0]'s
        tts.speak_many(["The cat."], language=5)
    with pytest.raises(XttsError, match="^max_frames '10' is not a whole number"):
        tts.speak_many(["The cat."], max_frames="10")
    with pytest.raises(XttsError, match=r"^speed 1\.5: this run's decoder"):
        tts.speak_many(["The cat.", "!!!"], speed=1.5)
    # A hint names the argument as Python passes it (it had been "use vocoder griffin-lim").
    hint = "pass the acoustic run as --run-dir and this one as --vocoder runs/v, or use --vocoder griffin-lim"
    said = api._in_python_words(XttsError("x", hint=hint)).hint
    assert said == 'pass the acoustic run as run_dir and this one as vocoder="runs/v", or use vocoder="griffin-lim"'
    # Clips' voices are kept for the next call, the most recent only: cloning uploads keeps memory flat.
    monkeypatch.setattr(api, "CLIP_VOICES", 2)
    clips = sorted((Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs").glob("*.wav"))[:3]
    for clip in clips:
        tts.voice(speaker_wav=clip)
    assert [key[1] for key in tts._voices if key[1] is not None] == [str(clip) for clip in clips[1:]]


@pytest.mark.slow
def test_the_python_api_caps_max_frames_cuts_a_long_part_and_reads_a_clip_again(tts, tmp_path):
    import shutil

    # A cap caps the speaking rate's window: one above it is no longer generation, one below shortens it.
    window = tts.speak("The cat sat.").frame_window
    assert tts.speak("The cat sat.", max_frames=100_000).frame_window == window
    capped = tts.speak("The cat sat.", max_frames=window[1] - 4)
    assert capped.frame_window[1] == window[1] - 4 and capped.frames <= window[1] - 4
    # A part with no space to cut it at is cut between its letters and said so, each piece spoken (its end
    # had been cut by the length limit, and 100,000 letters given to the model at once ran out of memory).
    long_word = tts.speak("a" * 600)
    assert long_word.sentences > 1
    assert [note for note in long_word.notes if "no space to cut it at" in note] == [
        "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'... is longer than one generation holds and has no space to cut it at: it is "
        "cut between its letters"
    ]
    spoken = tts.speak("The cat.")
    for place, says in (
        (tmp_path, "is a folder"),
        (tmp_path / "x.mp3", "a Speech is saved as WAV audio"),
        (Path("/proc/x.wav"), "Speech.save /proc/x.wav: nothing can be written in /proc"),
    ):
        with pytest.raises(XttsError, match=says):
            spoken.save(place)
    # Blank lines are passed over, as --text-file passes them; each clip's index names its text.
    spoken_many = [(s.index, s.text) for s in tts.speak_many(["The cat.", "  ", "The dog."])]
    assert spoken_many == [(0, "The cat."), (2, "The dog.")]
    # A clip written again at the same path is another voice; remember=False always reads it.
    clip = tmp_path / "ref.wav"
    wavs = sorted((Path(__file__).parents[1] / "xtts_cli" / "data" / "sample" / "wavs").glob("*.wav"))
    shutil.copy(wavs[0], clip)
    first = tts.voice(speaker_wav=clip).vector
    shutil.copy(wavs[-1], clip)
    assert not np.allclose(tts.voice(speaker_wav=clip).vector, first)


@pytest.mark.parametrize("run_dir", [None, "", "  "])
def test_the_python_api_names_a_missing_run_directory_in_one_line(run_dir):
    from xtts_cli.inference import Synthesizer

    with pytest.raises(XttsError) as error:  # not pathlib's TypeError, nor the current folder as a run
        Synthesizer.load(run_dir)
    assert str(error.value) == f"run_dir {run_dir!r} is no run directory"


def test_lines_joined_into_one_clip_keep_each_lines_language_notes_and_reading():
    from xtts_cli.speech.synthesis import Speech, joined

    def line(text: str, language: str, note: str, read_as: str) -> Speech:
        return Speech(
            waveform=np.zeros(2560, np.float32),
            mel=np.zeros((10, 80), np.float32),
            alignment=np.full((5, len(text)), 0.5, np.float32),
            alignment_score=0.5,
            stopped=True,
            frame_window=(2, 10),
            sample_rate=22050,
            text=text,
            language=language,
            language_note=note,
            read_as=read_as,
        )

    hello = line("Hello 2.", "en", "", "hello two.")
    persian = line("قیمت ۲ تومان است.", "fa", "read as fa, the run's language in Arabic script", "قیمت دو تومان است.")
    both = joined([hello, persian], "Hello 2.\nقیمت ۲ تومان است.")
    assert both.language == "en,fa" and both.read_as == "hello two. قیمت دو تومان است."
    assert both.notes == ["read as fa, the run's language in Arabic script"]  # the second line's, not lost
    assert joined([hello, hello], "a\nb").language == "en"
    # Markdown marks of several parts in one note (it had been said again for each part).
    heading = dataclasses.replace(hello, language_note="read markdown as its words: left out its heading marks")
    code = dataclasses.replace(hello, language_note="read markdown as its words: left out its code marks, bold marks")
    assert joined([heading, code, heading], "...").notes == [
        "read markdown as its words: left out its heading marks, code marks, bold marks"
    ]
    # A part the length limit cut is named ("ended by: the length limit of a part" had named none).
    cut = dataclasses.replace(hello, text="A sentence the limit cut, long enough to be shortened here.", stopped=False)
    spoken = joined([hello, cut, hello], "...")
    assert spoken.ended_by == "length limit"
    assert spoken.notes == ["the length limit cut 1 of its 3 parts short: 'A sentence the limit cut, long enough ...'"]
    assert joined([spoken, cut], "...").notes[-1].startswith("the length limit cut 2 of its 4 parts short: ")


def test_a_language_the_run_lacks_is_hinted_as_the_one_of_its_language_it_has():
    from xtts_cli.data.text import Tokenizer

    tokenizer = Tokenizer("abc", ["multilingual_cleaners"], languages=["en-us", "de"])
    assert tokenizer.language_index("DE") == 1
    for asked, near in (("de-DE", "de"), ("en_GB", "en-us"), ("fr", "en-us")):
        with pytest.raises(XttsError) as refused:
            tokenizer.language_index(asked)
        assert refused.value.hint == f"pass one of them, e.g. --language {near}"


def test_a_command_a_hint_suggests_quotes_a_run_directory_with_a_space(tmp_path):
    import shlex
    import shutil

    from xtts_cli.errors import unknown_speaker
    from xtts_cli.inference import Synthesizer

    run = tmp_path / "my run"
    shutil.copytree(RUN, run, ignore=shutil.ignore_patterns("checkpoints"))
    (run / "checkpoints").mkdir()
    with pytest.raises(XttsError) as untrained:
        Synthesizer.load(run)
    assert untrained.value.hint == f"train first: xtts train --run-dir {shlex.quote(str(run))}"
    assert shlex.split(unknown_speaker("zed", ["ann", "bob"], run).hint)[3:5] == ["-r", str(run)]


@pytest.mark.slow  # loads a run to speak
def test_a_vocoder_folder_without_a_trained_vocoder_is_said_not_passed_over(tmp_path):
    import shutil

    from xtts_cli.inference import Synthesizer

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "vocoder").mkdir()  # a vocoder run killed before its first checkpoint, or emptied
    tts = Synthesizer.load(run)
    assert tts.vocoder.name == "griffin-lim"
    assert f"{run / 'vocoder'} holds no trained vocoder yet: Griffin-Lim makes the waveform" in tts.notes
    assert Synthesizer.load(RUN).notes == []  # none there: nothing to say
    # One that trained and whose checkpoints, or whose config, are lost since is refused as --vocoder
    # refuses it: it had been passed over for Griffin-Lim as "no trained vocoder yet", and exported so.
    import json

    import yaml

    from xtts_cli.config.schema import XttsConfig

    vocoder = XttsConfig.model_validate({"model": {"kind": "vocoder"}})
    (run / "vocoder" / "config.yaml").write_text(yaml.safe_dump(vocoder.model_dump(mode="json")), encoding="utf-8")
    (run / "vocoder" / ".xtts-run").write_text("an xtts run directory\n", encoding="utf-8")
    past = vocoder.training.save_step + 20
    (run / "vocoder" / "metrics.jsonl").write_text(json.dumps({"step": past, "loss": 1.0}) + "\n", encoding="utf-8")
    with pytest.raises(XttsError, match=f"logged steps up to {past}"):
        Synthesizer.load(run)
    # A start of 4 steps that ended (and saved its last) before the first save_step: trained too.
    (run / "vocoder" / "metrics.jsonl").unlink()
    start = {"started": "2026-12-05T12:00:00", "steps": [0, 4], "ended": "2026-12-05T12:01:00"}
    for ended_by, refused in (("its last step (training.max_steps or epochs)", True), ("error: out of memory", False)):
        record = {"history": [{**start, "ended_by": ended_by}]}
        (run / "vocoder" / "run.json").write_text(json.dumps(record), encoding="utf-8")
        if refused:
            with pytest.raises(XttsError, match="logged steps up to 4"):
                Synthesizer.load(run)
        else:  # an error before any save: no vocoder yet
            assert Synthesizer.load(run).vocoder.name == "griffin-lim"
    (run / "vocoder" / "config.yaml").write_text("model: [oops\n", encoding="utf-8")
    with pytest.raises(XttsError, match="config.yaml"):
        Synthesizer.load(run)
    shutil.rmtree(run / "vocoder")
    # Its measured speaking rate gone: the window each sentence may take is a guess, said.
    (run / "speaking_rate.json").unlink()
    assert Synthesizer.load(run).notes == [
        f"{run} has no readable speaking_rate.json: how long each sentence may run is a rough guess per character, "
        "not the pace the run measured (a sentence may run on, or be cut short)"
    ]


def test_the_python_api_warns_what_the_command_line_prints_beside_a_speech(tts, tmp_path):
    import shutil
    import warnings

    from xtts_cli.errors import XttsNote
    from xtts_cli.inference import Synthesizer

    # What a text lost is warned at the caller's own line, as the command line prints it beside the
    # clip: Speech.notes alone had kept it from anyone who did not know to look.
    with pytest.warns(XttsNote) as said:
        speech = tts.speak("I ❤️ you.")
    assert [str(note.message) for note in said] == speech.notes and speech.notes
    assert {note.filename for note in said} == {__file__}
    # speak_many warns each text's once, where the caller takes it; a clean text warns nothing.
    with pytest.warns(XttsNote) as said:
        spoken = list(tts.speak_many(["The cat.", "I ❤️ you."]))
    assert [str(note.message) for note in said] == spoken[1].notes and not spoken[0].notes
    assert {note.filename for note in said} == {__file__}
    with warnings.catch_warnings():
        warnings.simplefilter("error", XttsNote)
        tts.speak("The cat.")
        # Loaded for the command line, which prints them itself: none is warned.
        Synthesizer.load(RUN, flags=True).speak("I ❤️ you.")
    # The load's own notes: a speaking rate lost since.
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    (run / "speaking_rate.json").unlink()
    with pytest.warns(XttsNote, match="has no readable speaking_rate.json") as said:
        Synthesizer.load(run)
    assert {note.filename for note in said} == {__file__}


def test_the_python_api_names_its_arguments_and_the_command_line_its_flags(tts, runner, tmp_path):
    from xtts_cli.inference import Synthesizer

    with pytest.raises(XttsError) as language:
        tts.speak("Hi.", language="xx")
    assert language.value.lines[0].startswith("language: this model was not trained on 'xx'")
    assert language.value.hint == 'pass one of them, e.g. language="en"'
    with pytest.raises(XttsError) as clip:
        tts.speak_many(["Hi."], speaker_wav=str(tmp_path / "nope.wav"))  # raised at the call, said the same
    assert clip.value.lines[0].startswith(f"speaker_wav {str(tmp_path / 'nope.wav')!r}")
    with pytest.raises(XttsError) as speaker:
        tts.speak("Hi.", speaker="nobody")
    assert speaker.value.hint == "Synthesizer.speakers lists them" and "--" not in str(speaker.value)
    with pytest.raises(XttsError) as missing:
        Synthesizer.load(tmp_path / "nothere")
    assert missing.value.hint.startswith("pass run_dir as the directory of an `xtts train` run")
    said = runner.invoke(app, ["synthesize", "Hi.", "-r", str(RUN), "--language", "xx", "-o", str(tmp_path / "a.wav")])
    assert said.exception.lines[0].startswith("--language: this model was not trained on 'xx'")


def test_an_export_finished_into_a_folder_another_export_filled_meanwhile_is_refused_in_one_line(tmp_path):
    """Two exports to one new folder: the second to finish finds it filled by the first."""
    from xtts_cli.inference.export import _move_into_place

    def partial(name: str) -> Path:
        folder = tmp_path / f".out.partial-{name}"
        folder.mkdir()
        (folder / "saved_model.pb").write_text(name, encoding="utf-8")
        return folder

    out = tmp_path / "out"
    _move_into_place(partial("first"), out)  # a folder never made
    assert (out / "saved_model.pb").read_text(encoding="utf-8") == "first"
    with pytest.raises(XttsError, match="^--out .* already holds files: another export wrote it while this one ran"):
        _move_into_place(partial("second"), out)
    assert (out / "saved_model.pb").read_text(encoding="utf-8") == "first"  # the first's export is kept whole
    (tmp_path / "empty").mkdir()
    _move_into_place(partial("third"), tmp_path / "empty")  # an empty folder, as the start allows
    assert (tmp_path / "empty" / "saved_model.pb").read_text(encoding="utf-8") == "third"


def test_a_speed_is_named_as_given_not_rounded_to_one_it_was_not():
    from xtts_cli.errors import speed_without_pace

    assert speed_without_pace(1.0000000001).lines[0].startswith("speed 1.0000000001: this run's decoder")
    assert speed_without_pace(1.3).lines[0].startswith("speed 1.3: ")


def test_each_sentence_of_a_text_in_two_languages_is_measured_and_read_in_its_own():
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.data.text import Tokenizer, prepare_texts
    from xtts_cli.speech.synthesis import reading_parts

    german, persian = "Es kostet zwölf Euro.", "من دوازده سیب خریدم."
    symbols = {*prepare_texts([german], ["basic_cleaners"], "phonemes", "de")[0]}
    symbols |= {*prepare_texts([persian], ["basic_cleaners"], "phonemes", "fa")[0]}
    tokenizer = Tokenizer(sorted(symbols), ["basic_cleaners"], frontend="phonemes", languages=["de", "fa"])
    text = "Es kostet 12 Euro. من ۱۲ سیب خریدم."
    # The Persian sentence had been measured as German (five times its phonemes: "arabisch mim ..."),
    # so cut up, its number put into German words, and that part read as German.
    parts = reading_parts(tokenizer, text, DataConfig(max_mel_frames=400), None, None)
    assert [(part, language) for part, language, _ in parts] == [
        ("Es kostet 12 Euro.", "de"),
        ("من ۱۲ سیب خریدم.", "fa"),
    ]
    cut = reading_parts(tokenizer, text, DataConfig(max_mel_frames=200), None, None)
    assert [(part, language) for part, language, _ in cut][2:] == [("من دوازده", "fa"), ("سیب خریدم.", "fa")]
    # Text in a script neither language is written in: refused, not spoken as its letters' names
    # ("kyrillisch pe, kyrillisch er ...") with exit 0; --language reads it so all the same.
    with pytest.raises(XttsError) as unread:
        reading_parts(tokenizer, "Привет, как дела?", DataConfig(max_mel_frames=400), None, None)
    assert unread.value.lines == [
        "the text 'Привет, как дела?' is in Cyrillic script, which none of the run's languages (de, fa) is written "
        "in: espeak-ng would spell each word by its letters' names"
    ]
    assert reading_parts(tokenizer, "Привет.", DataConfig(max_mel_frames=400), None, "de")
    # Latin and Greek espeak-ng reads in a voice of theirs (English, Greek), not spelt: read, as before.
    for voiced in ("Google", "Καλημέρα κόσμε"):
        assert reading_parts(tokenizer, voiced, DataConfig(max_mel_frames=400), None, None)
    # Its English voices spell Greek ("'alf@ T'i:t@ ..."): refused there, and named so in a sentence.
    from xtts_cli.data.text import reading_language, refuse_unread_script

    with pytest.raises(XttsError, match="is in Greek script"):
        refuse_unread_script(["en"], "Καλημέρα κόσμε", None)
    assert "'π' (Greek)" not in reading_language(["de"], "Die Zahl π ist ungefähr drei.", None)[1]
    assert "'Αθήνα' (Greek)" in reading_language(["en"], "I flew to Αθήνα today.", None)[1]


def test_a_slower_speed_cuts_a_text_into_parts_that_each_still_fit_one_generation():
    from xtts_cli.config.schema import DataConfig
    from xtts_cli.data.text import Tokenizer
    from xtts_cli.speech.synthesis import reading_parts

    tokenizer = Tokenizer("abcdefghijklmnopqrstuvwxyz .,", ["english_cleaners"], languages=["en"])
    text = "The kettle is on the stove. Close the window before the rain comes in."
    data = DataConfig(max_mel_frames=800)
    parts = {
        speed: [part for part, _, _ in reading_parts(tokenizer, text, data, None, "en", speed)]
        for speed in (1, 0.5, 0.25, 4)
    }
    # Spoken at a quarter of the pace, each token takes four times the frames: a sentence that fits at
    # 1 ran into the length limit (its end cut) at 0.25. Faster, the parts are those of 1.
    assert len(parts[1]) == 2 and len(parts[0.5]) > 2 and len(parts[0.25]) > len(parts[0.5]) and parts[4] == parts[1]
    assert " ".join(parts[0.25]) == text.lower()


@pytest.mark.slow  # processes of their own
def test_a_host_program_that_changes_directory_forks_or_damages_files_gets_the_words_not_a_hang(
    tmp_path, monkeypatch, runner
):
    """A Synthesizer in someone else's program: a relative run_dir and an os.chdir had lost its default
    voice; a child forked after the load waited for ever on its first call; a speed that is no number,
    a damaged reference or speakers.json reached the caller as numpy's, json's or a format's error."""
    import multiprocessing
    import shutil

    from xtts_cli.inference import Synthesizer

    shutil.copytree(RUN, tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    tts = Synthesizer.load("run")
    monkeypatch.chdir(tmp_path.parent)
    assert tts.speak("Hi.").waveform.size > 0  # the run's reference, read from where it was loaded
    assert tts.speak("Hi.", language=" EN ").language == "en"  # the run's code, not the caller's spelling
    from xtts_cli.inference.api import _PYTHON_WORDS, reworded

    # Hints in a Python caller's words: its arguments as it writes them, a path's colon outside its quotes.
    assert (
        reworded("pass --speaker-wav FILE or --speaker NAME", _PYTHON_WORDS)
        == 'pass speaker_wav="clip.wav" or speaker="NAME"'
    )
    assert reworded("--vocoder runs/b: that run is not a vocoder", _PYTHON_WORDS).startswith('vocoder="runs/b": that')
    for speed in ("x", None):
        with pytest.raises(XttsError, match="not a number"):
            tts.check("hi", speed=speed)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()

    def child() -> None:
        try:
            tts.speak("Hi.")
            queue.put("spoke")
        except XttsError as error:
            queue.put(str(error))

    process = context.Process(target=child)
    process.start()
    process.join(60)
    assert process.exitcode == 0 and queue.get(timeout=5).startswith("this process was forked from one whose")
    (tmp_path / "run" / "speaker_reference.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(XttsError, match="speaker_reference.npy cannot be read"):
        Synthesizer.load(tmp_path / "run").speak("Hi.")
    (tmp_path / "run" / "speakers.json").write_text("{oops", encoding="utf-8")
    fresh = Synthesizer.load(tmp_path / "run")
    speaker = fresh.speakers[0]
    assert fresh.speak("Hi.", speaker=speaker).waveform.size > 0  # its centroid is in the checkpoint
    from xtts_cli.cli.app import app

    listed = runner.invoke(app, ["synthesize", "-r", str(tmp_path / "run"), "--list-speakers"])
    assert listed.exit_code == 0 and speaker in listed.stdout.split(), (listed.output, listed.exception)
    assert "the speakers are listed without their minutes" in listed.stderr


def test_a_reference_clip_of_noise_is_said_to_be_noise_and_one_of_speech_is_not(tts, tmp_path):
    import soundfile

    from xtts_cli.speech.synthesis import write_wav

    speech, rate = soundfile.read(Path(__file__).parent / "data" / "speech" / "sentence-0.wav", dtype="float32")
    white = np.random.default_rng(0).normal(0.0, 1.0, rate * 4).astype(np.float32)
    spectrum = np.fft.rfft(white)  # brown noise: white's spectrum shaped to a power of 1/f^2 (above 20 Hz)
    brown = np.fft.irfft(spectrum / np.maximum(np.fft.rfftfreq(len(white), 1 / rate), 20.0), len(white))
    # Noise of any colour (a fan, static, the wrong file) and a hum had been cloned as a voice without a word.
    hum = 0.3 * np.sin(2 * np.pi * 50 * np.arange(rate * 4) / rate).astype(np.float32)
    for name, clip in (("white", white * 0.1), ("brown", brown / np.abs(brown).max() * 0.3), ("hum", hum)):
        write_wav(tmp_path / f"{name}.wav", clip, rate)
        note = tts.voice(speaker_wav=tmp_path / f"{name}.wav").note
        assert note.startswith("the voice's clip is steady throughout (its loudness varies by 0."), (name, note)
        assert "the voice cloned from it carries that; pass a clip of clean speech; " in note
    # A voice rises and falls: clean, or under white noise as loud as it, it is a voice.
    speech = speech / np.sqrt(np.mean(speech**2)) * 0.1
    for loudness in (0.0, 0.01, 0.1):
        write_wav(tmp_path / "mixed.wav", speech + white[: len(speech)] * loudness, rate)
        note = tts.voice(speaker_wav=tmp_path / "mixed.wav", remember=False).note
        # Nor noise; a clip under the run's rate (these are 16 kHz) is said to lack the voice's upper
        # part, as vocode says of a recording: it had been cloned from without a word.
        assert rate < tts.sample_rate and note == (
            f"the voice's clip is {rate} Hz, under the run's {tts.sample_rate} Hz: it holds nothing of the voice "
            f"above {rate // 2} Hz, and a clip recorded at {tts.sample_rate} Hz or more clones it better"
        ), loudness


def test_an_arrow_left_out_is_named_left_out_not_read_as_its_nearest():
    # "→" alone holds the arrow that marks "ɒ→ɔ": it had been listed among the phonemes read as their nearest.
    from xtts_cli.speech.synthesis import text_notes

    assert text_notes("", ["\u2192", "\u0252\u2192\u0254", ";"]) == [
        "read what the run never learnt as the nearest it knows: \u0252\u2192\u0254",
        "left out what the run never saw: \u2192 ;",
    ]


def test_html_character_references_are_read_as_their_characters():
    # Text copied from a page or escaped JSON: "&amp;" had been read as "and amp,", "&#39;" as "and number
    # thirty nine"; "AT&T" and an escaped tag stay text ("use &lt;b&gt; for bold" is about the tag).
    from xtts_cli.data.text import without_markup

    text, note = without_markup("Tom &amp; Jerry, it&#39;s &lt;b&gt;fine&lt;/b&gt; at AT&T&#x21; <i>R&D;</i> &bogus;")
    assert text == "Tom & Jerry, it's <b>fine</b> at AT&T! R&D; &bogus;"
    assert note.endswith(
        "left out the markup tags <i> (xtts reads plain text; the words between them are read); "
        "read the HTML character references &amp; &#39; &lt; &gt; &#x21; as the characters they stand for"
    )
    # A name HTML lists whole alone: "&notanentity;" had been read as "¬anentity;", its legacy prefix.
    assert without_markup("&notanentity; &not;")[0] == "&notanentity; \u00ac"
    assert without_markup("AT&T and R&D") == ("AT&T and R&D", "")


def test_markdown_is_read_as_its_words_not_its_marks():
    # A chat assistant's answer: a phonemes run had said "asterisk asterisk bold", "hash heading" and a
    # link's address; espeak-ng reads those marks by name.
    from xtts_cli.data.phonemes import phonemize
    from xtts_cli.data.text import without_markup

    answer = (
        "### 3. Setup\n**Bold text** and *italic text* here.\n* first item\n- second item!\n"
        "See [the docs](https://example.com/docs) and run `pip install xtts`.\n"
        "| Name | Age |\n|------|-----|\n| Ann | 5 |\n> Use the ~~old~~ new API.\n---\n```python\nx = 1\n```"
    )
    text, note = without_markup(answer)
    assert (
        text.split()
        == (
            "3. Setup. Bold text and italic text here. first item. second item! See the docs and run pip install "
            "xtts. Name, Age. Ann, 5. Use the old new API. x = 1"
        ).split()
    )
    assert note == (
        "read markdown as its words: left out its code marks, code fences, rules, table rules, link addresses, "
        "heading marks, quote marks, list marks, table bars, emphasis, strike-through"
    )
    said = phonemize([text], "en-us")[0]
    assert not any(name in said for name in ("ˈæstɚɹˌɪsk", "hˈæʃ", "slˈæʃ", "tˈɪldə"))
    # What is no markdown stays: a product, a name of code, a number, a pair of plain dashes.
    plain = "Compute 5 * 3 * 2, my_var_name, #1 and a*b*c - then stop."
    assert without_markup(plain) == (plain, "")
    # Names in code, powers and paths (they had lost their marks as emphasis), a code span's own text.
    code = "Use __init__.py and __main__, 2**10 and ~/docs/*.txt or ~/src/*.py."
    assert without_markup(code) == (code, "")
    assert without_markup("Run `__init__.py` now")[0] == "Run __init__.py now"
    # A numbered item ends with the pause a bullet's does; task boxes and a rule between paragraphs go.
    listed = without_markup("1. First item\n2. Second item\n- [ ] todo\n- [x] done\nBefore\n---\nAfter")
    assert listed == (
        "1. First item.\n2. Second item.\ntodo.\ndone.\nBefore\n\nAfter",
        "read markdown as its words: left out its rules, task boxes",
    )


@pytest.mark.slow
def test_a_pipe_whose_reader_exits_before_the_wav_is_said_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    from training_support import subprocess_env

    # `xtts synthesize ... -o - | player` with a player that exits at once: exit 1 had come without a word.
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        [sys.executable, "-m", "xtts_cli", "synthesize", "Hello.", "-r", str(RUN), "-o", "-"],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
        cwd=tmp_path,
        timeout=300,
    )
    os.close(write)
    assert done.returncode == 1, done.stderr
    assert "error: --out -: the pipe's reader exited before the WAV was written" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
