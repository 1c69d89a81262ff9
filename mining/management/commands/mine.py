"""`manage.py mine`: mine a model's FFN keys over a corpus into a new study (docs/mining.md).

Runs in this process by default (the same services the Celery tasks call, shard after
shard); ``--async`` queues the run on the workers instead and follows its progress.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from mining import services
from mining.core import COEFFICIENTS, MineConfig, MiningError, MiningStopped
from mining.models import MiningRun
from mining.selectors import mining_run_progress

BAD_KEY_LIST = "--keys takes LAYER:INDEX pairs separated by commas (layers from 1), not {value!r}"


def parse_key_list(value: str) -> list[tuple[int, int]]:
    """``"1:12,3:400"`` (layers from 1, as everywhere in the interface) → 0-based pairs."""
    pairs = []
    for item in value.split(","):
        layer, sep, index = item.strip().partition(":")
        if not sep or not layer.strip().isdigit() or not index.strip().isdigit():
            raise CommandError(BAD_KEY_LIST.format(value=value))
        if int(layer) < 1:
            raise CommandError(f"layers are numbered from 1, not {layer.strip()}")
        pairs.append((int(layer) - 1, int(index)))
    return pairs


class Command(BaseCommand):
    help = "Mine the top-k trigger prefixes of a model's FFN keys over a corpus into a study."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True, help="HF id, local dir or builtin:minilm")
        parser.add_argument(
            "--corpus",
            required=True,
            help="text file, .jsonl, .tokens (WikiText), hf:NAME:CONFIG:SPLIT, builtin:wiki-vital",
        )
        parser.add_argument("--study", default="", help="study name (default: model · corpus)")
        parser.add_argument("--keys-per-layer", type=int, default=10)
        parser.add_argument("--all-keys", action="store_true", help="every key of every layer")
        parser.add_argument("--keys", default="", help="explicit keys: LAYER:INDEX,... (from 1)")
        parser.add_argument("--top-k", type=int, default=25)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--device", default="cpu")
        parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
        parser.add_argument("--max-sentences", type=int, default=None)
        parser.add_argument("--max-tokens", type=int, default=128)
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--shards", type=int, default=1)
        parser.add_argument("--sentences", default="split", choices=["split", "lines"])
        parser.add_argument(
            "--coefficient",
            default="post",
            choices=list(COEFFICIENTS),
            help="what is ranked: post = the down projection's input, after the activation "
            "(the paper's m_i); pre = the up projection's output, before it, as the authors' "
            "released code (not for gated SwiGLU families)",
        )
        parser.add_argument(
            "--perturb",
            action="store_true",
            help="also measure §3.2 / Figure 3: first, last and random token removal on the "
            "top-50 prefixes of each sampled key (costs about 4 forward passes per prefix)",
        )
        parser.add_argument(
            "--async",
            dest="run_async",
            action="store_true",
            help="queue the run on the Celery workers (queue gpu) and follow its progress",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        config = MineConfig(
            model=opts["model"],
            corpus=opts["corpus"],
            sentences=opts["sentences"],
            top_k=opts["top_k"],
            keys_per_layer=opts["keys_per_layer"],
            all_keys=opts["all_keys"],
            key_list=parse_key_list(opts["keys"]) if opts["keys"] else None,
            seed=opts["seed"],
            device=opts["device"],
            dtype=opts["dtype"],
            max_sentences=opts["max_sentences"],
            max_tokens=opts["max_tokens"],
            batch_size=opts["batch_size"],
            coefficient=opts["coefficient"],
        )
        study_name = opts["study"] or f"{config.model} · {config.corpus}"
        try:
            run = services.mining_run_create(
                study_name=study_name,
                config=config,
                n_shards=opts["shards"],
                perturb=opts["perturb"],
            )
        except MiningError as exc:
            raise CommandError(str(exc)) from exc
        if opts["run_async"]:
            self._follow_async(run)
        else:
            self._run_here(run)
        run.refresh_from_db()
        if run.status != MiningRun.Status.DONE:
            raise CommandError(f"mining run {run.pk} {run.status}: {run.error}")
        assert run.study is not None
        self.stdout.write(
            self.style.SUCCESS(
                f"Study {run.study.name!r} (id {run.study.pk}): "
                f"{run.study.keys.count()} keys, top {config.top_k} prefixes each, "
                f"{run.sentences_total} sentences ({run.sentences_truncated} cut at "
                f"{config.max_tokens} tokens), {run.tokens_total} tokens."
            )
        )

    def _run_here(self, run: MiningRun) -> None:
        try:
            shards = services.mining_run_prepare(run=run)
            run.refresh_from_db()
            with tqdm(
                total=run.tokens_total,
                unit="tok",
                unit_scale=True,
                desc="mining",
                file=self.stderr._out,
                dynamic_ncols=True,
            ) as bar:
                done_before = 0
                for shard in shards:

                    def progress(
                        sentences: int,
                        tokens: int,
                        base: int = done_before,
                        first: int = shard.start,
                    ) -> None:
                        bar.n = base + tokens
                        bar.set_postfix_str(f"{first + sentences}/{run.sentences_total} sentences")
                        bar.refresh()

                    merge_now = services.mining_shard_mine(shard=shard, progress=progress)
                    done_before += shard.tokens_total
                    bar.n = done_before
                    bar.refresh()
            if merge_now:
                self.stderr.write("merging shards and loading the study…")
                services.mining_run_merge(run=run)
        except (MiningError, MiningStopped) as exc:
            services.mining_run_fail(run=run, error=str(exc))
            raise CommandError(str(exc)) from exc

    def _follow_async(self, run: MiningRun) -> None:
        from mining.tasks import prepare_run

        transaction.on_commit(lambda: prepare_run.delay(run.pk))
        self.stderr.write(
            f"queued mining run {run.pk}; following its progress (Ctrl-C stops following)"
        )
        with tqdm(unit="tok", unit_scale=True, desc="mining", file=self.stderr._out) as bar:
            while True:
                run.refresh_from_db()
                progress = mining_run_progress(run=run)
                bar.total = progress["tokens_total"] or None
                bar.n = progress["tokens_done"]
                shards = f"{progress['shards_done']}/{progress['shards_total']} shards"
                bar.set_postfix_str(f"{run.status}, {shards}")
                bar.refresh()
                if run.finished:
                    return
                time.sleep(1.0)
