"""``SciGUIEnv``: one Gymnasium env class for every tool.

``reset()`` restores the tool's snapshot and stages a task variant; ``step()`` parses an action
(pyautogui string, action-space dict, human dict or Action objects), performs it, waits for the
screen to settle and observes. Rewards are 0 until the episode ends (``DONE``/``FAIL``, the step
budget, the program exiting, or a sandbox zone passing its memory budget: ``info["end"]`` says
which); then the task's evaluator scores the final state in [0, 1]. ``FAIL`` claims the task
cannot be done: on a feasible task it scores 0 whatever came before it (``Task.criteria`` gates
on it), on an infeasible one it is the only ending that earns credit.
"""

from __future__ import annotations

import copy
import shutil
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from PIL import Image

from sciagent_gym.actions import types as A
from sciagent_gym.actions.human import action_to_dict
from sciagent_gym.actions.parse import parse_action
from sciagent_gym.actions.space import make_action_space
from sciagent_gym.actions.text_space import UnicodeText
from sciagent_gym.benchmarks import load_all as load_benchmarks
from sciagent_gym.controller import computer_api
from sciagent_gym.controller.settle import SettleConfig
from sciagent_gym.evaluation import (
    EvaluationResult,
    FinalState,
    commands_needed,
    evaluate,
)
from sciagent_gym.evaluation.cost import is_cheap
from sciagent_gym.evaluation.rewards import EpisodeEnd, episode_reports, get_reward
from sciagent_gym.evaluation.warm import close_warm, defer_warm, prepare_warm
from sciagent_gym.processes import close_at_exit, owned_tempdir
from sciagent_gym.providers.factory import (
    CONFIGS,
    ProviderConfig,
    ProviderContext,
    make_provider,
    provider_class,
)
from sciagent_gym.safe_fs import freeze_copy
from sciagent_gym.screen_space import ScreenBox
from sciagent_gym.tasks.queries import query_index
from sciagent_gym.tasks.spec import CLI_MODALITIES, MODALITIES, TaskSpec
from sciagent_gym.tasks.task import HELDOUT_SPLIT, SPLITS, Task, episode_split, variant_split
from sciagent_gym.timings import Timings
from sciagent_gym.tools import load_adapter, load_tool_specs

PROVIDERS = tuple(CONFIGS)  # the built-in ones: "local", "qemu", "remote", "fake"
MAX_INSTRUCTION = 4096
MAX_TERMINAL = 16384
MAX_WAIT = 10.0


class SciGUIEnv(gym.Env):
    """A real scientific program on a virtual display, as a Gymnasium env.

    Args:
        tool: tool folder name (``"imagej"``); registered ids fill it in.
        task: a task id (``"imagej/count-nuclei"`` or ``"count-nuclei"``); without it each
            reset samples a task from the tool's pool with the reset seed.
        render_mode: ``None`` or ``"rgb_array"`` (the last screenshot).
        screen_size: (width, height) of the virtual screen.
        max_steps: step budget; default the task's own (50 unless the spec says otherwise).
        reward: the name of a registered reward (``evaluation.rewards``): ``"partial"`` (the
            evaluator's score at the end), ``"binary"`` (1.0 on success) or ``"dense"``: after
            every step, the change in a progress score computed from the cheap criteria only
            (files, tables, status, windows, pixels; see ``evaluation.cost``) with every
            criterion's weight in the total; the final step adds the rest, so an episode's
            rewards sum to its final partial score. Ported benchmarks add theirs:
            ``"stbench"``, ST-Bench's continuous training reward at the end (tasks whose
            metrics are ``stbench_target`` criteria; ``sciagent_gym.benchmarks.stbench``).
            Episode reports registered beside them put their breakdown in the final step's
            ``info`` in every mode (ST-Bench's per-metric reward in ``info["stbench"]``).
        split: ``None`` (all variants and tasks), ``"train"``/``"val"``/``"test"``: reset only
            draws variant seeds of that split (a fixed 80/10/10 hash of task id and seed; for a
            task with a query pool, its queries' fixed split in ST-Bench's proportions) of
            the tasks that are not held out, or ``"heldout-tasks"``: only the held-out task
            families (spec ``heldout: true``, about 15% of each tool's, chosen once), any seed,
            to report generalisation to tasks never trained on.
        modality: ``None`` (each task's declared modality) or ``"gui"``/``"gui+cli"``/
            ``"code"`` for every task: an ablation such as "the same GUI tasks with a shell".
            Results are reported under the modality used (``info["modality"]``).
        hints: append the task's workflow hints to the instruction.
        obs_size: (width, height) to resize the observed screenshot to (bilinear); actions
            stay in screen pixels and ``render()`` keeps the full frame.
        pool_size: spare sandboxes prepared in the background for the variants the env
            expects next (the continuation of the RNG after an unseeded reset; seed + 1, the
            RNG's continuation, then the same seed after a seeded one), so that most resets
            only swap a ready sandbox in. 0 disables it. Only providers with
            ``supports_pool`` (local) keep spares; on the others (qemu resets its one VM by
            ``loadvm``, remote its one machine) 0 and 1, the default, both mean none and more
            raises ValueError.
        pool_workers: how many spare sandboxes are prepared at the same time (1 to
            ``pool_size``; default 1). More help when episodes are shorter than the
            program's start and the cores are not busy.
        soft_reset: providers with ``supports_soft_reset`` only (local; elsewhere a value
            above 0 raises ValueError): up to this many resets in a row (0, the default:
            none) keep the program running when the new episode has the same task as the
            last, and the tool's adapter restores it in place (DS9: reload the inputs and set
            back every display setting, region and panel tasks read or change) instead of
            restarting it. Home and work directory are restored as in a restart; after the
            budget, or when the adapter cannot restore it (another window is open), the
            program is restarted. For RL on short tasks: a DS9 reset takes ~1 s instead of
            ~2.5 s and costs no start-up CPU. tests/e2e/test_soft_reset_e2e.py checks that the
            start frame and state dump equal a restart's; state outside them (e.g. a
            preference changed in a dialog) can survive until the next restart. Use it with
            ``pool_size=0``: pooled sandboxes are restarts prepared ahead.
        provider: a provider's name, or its typed configuration
            (:mod:`sciagent_gym.providers.factory`: ``LocalConfig``, ``QemuConfig``,
            ``RemoteConfig``, ``FakeConfig``), which then carries what the arguments
            ``isolation``, ``pool_size``, ``pool_workers``, ``url``, ``token``, ``reset_hook``
            and ``provider_options`` give for a name. The names: ``"local"`` (Xvfb on this
            machine, the default), ``"qemu"`` (the tool's
            guest image under QEMU, reset by ``loadvm``; build it first with
            ``sciagent-gym image build <tool>``) or ``"remote"`` (a control server someone
            else runs, at ``url`` with ``token``) or ``"fake"`` (no display and no program:
            :class:`~sciagent_gym.providers.fake.FakeProvider`, for unit tests of the env's
            logic; reach it as ``env.provider`` to script commands or simulate the program).
        isolation: ``"auto"``, ``"bwrap"`` or ``"none"`` (see providers.sandbox).
        allow_unsafe_cli: run CLI actions even without isolation (development only).
        url, token: the remote provider's control server and its secret.
        reset_hook: remote provider only: a shell command, an http(s) URL (POSTed to) or a
            callable that reverts the remote machine (e.g. its VM snapshot) on every reset;
            without one the program is restarted.
        provider_options: extra arguments of the qemu provider (``memory_mb``, ``cpus``,
            ``accel``, ``cache_dir``) or of the fake one (``cli_isolated``).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, tool: str, task: str | None = None, render_mode: str | None = None,
                 screen_size: tuple[int, int] = (1280, 800), max_steps: int | None = None,
                 reward: str = "partial", provider: str | ProviderConfig = "local",
                 isolation: str = "auto",
                 settle: SettleConfig | None = None, allow_unsafe_cli: bool = False,
                 split: str | None = None, hints: bool = False, pool_size: int = 1,
                 pool_workers: int = 1,
                 obs_size: tuple[int, int] | None = None, url: str | None = None,
                 token: str | None = None, reset_hook: Any = None,
                 provider_options: dict[str, Any] | None = None,
                 expose_state: bool = False, soft_reset: int = 0,
                 modality: str | None = None) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', not {render_mode!r}")
        load_benchmarks()  # their rewards and episode reports
        self._reward = get_reward(reward)
        if split is not None and split not in (*SPLITS, HELDOUT_SPLIT):
            raise ValueError(f"split must be None or one of {(*SPLITS, HELDOUT_SPLIT)}, "
                             f"not {split!r}")
        if modality is not None and modality not in MODALITIES:
            raise ValueError(f"modality must be None or one of {MODALITIES}, not {modality!r}")
        self._modality_override = modality
        if not isinstance(provider, ProviderConfig) and provider not in CONFIGS:
            raise ValueError(f"unknown provider {provider!r} (available: "
                             f"{', '.join(CONFIGS)})")
        config = provider if isinstance(provider, ProviderConfig) else \
            CONFIGS[provider].from_env_args(
                provider_options or {}, isolation=isolation, pool_size=pool_size,
                pool_workers=pool_workers, url=url, token=token, reset_hook=reset_hook)
        provider = config.name
        self.provider_name = provider
        self.provider_config = config
        self.adapter = load_adapter(tool)
        if provider == "local":  # elsewhere the program lives in the guest, remote or nowhere
            self.adapter.check_installed()
        self.specs: dict[str, TaskSpec] = load_tool_specs(tool)
        if not self.specs:
            raise ValueError(f"tool {tool!r} has no task specs")
        self._fixed_task = self._resolve_task_id(task) if task else None
        if self._fixed_task and split is not None and \
                self.specs[self._fixed_task].heldout != (split == HELDOUT_SPLIT):
            kind = "a held-out task" if self.specs[self._fixed_task].heldout else \
                "not a held-out task"
            raise ValueError(f"{self._fixed_task} is {kind}, so split={split!r} has no "
                             "variant of it")
        self.render_mode = render_mode
        self.width, self.height = screen_size
        self.reward_mode = reward
        self._max_steps_override = max_steps
        self._settle = settle
        self._allow_unsafe_cli = allow_unsafe_cli
        self.split, self.hints = split, hints
        if isinstance(soft_reset, bool) or not isinstance(soft_reset, int) or soft_reset < 0:
            raise ValueError(f"soft_reset must be an int >= 0 (resets in a row that keep the "
                             f"program running), not {soft_reset!r}")
        cls = provider_class(provider)
        if soft_reset and not cls.supports_soft_reset:
            raise ValueError(f"soft_reset={soft_reset}: the {provider} provider cannot keep "
                             "the program running between episodes (use 0)")
        self.pool_size = config.pool_size
        self._expected: list[tuple[str, int]] = []  # announced by expect()
        self.soft_reset, self._soft_in_a_row = soft_reset, 0
        # The program's internal state in info["state"] after reset and every step (POMDP
        # studies: what the screenshot does not show). Never in the observation.
        self.expose_state = expose_state
        self._progress = 0.0
        self.obs_size = tuple(obs_size) if obs_size else None
        obs_w, obs_h = self.obs_size or (self.width, self.height)
        self.observation_space = spaces.Dict({
            "screenshot": ScreenBox(0, 255, (obs_h, obs_w, 3), np.uint8),
            "instruction": UnicodeText(MAX_INSTRUCTION),
            "terminal": UnicodeText(MAX_TERMINAL),
        })
        self.action_space = make_action_space(self.width, self.height)
        self.provider = None
        close_at_exit(self)  # an env never closed still ends its program and dirs at exit
        self.task: Task | None = None
        self.final_state: FinalState | None = None
        #: What the last freeze copied and left out (``safe_fs.FreezeReport.to_dict``).
        self.freeze_report: dict | None = None
        self.evaluation: EvaluationResult | None = None
        self.episode_reports: dict[str, Any] = {}  # registered reports' breakdowns at the end
        self._criteria: list = []
        self._frozen: list[Path] = []  # private copies of work dirs the evaluator read
        self._frame = np.zeros((self.height, self.width, 3), np.uint8)
        self._terminal = ""
        self._answer: str | None = None
        self._steps = 0
        self._episode_over = True

    # -- task selection ----------------------------------------------------------------------
    def _resolve_task_id(self, task: str) -> str:
        key = task if "/" in task else f"{self.adapter.name}/{task}"
        if key not in self.specs:
            raise ValueError(f"unknown task {task!r} for {self.adapter.name} "
                             f"(known: {', '.join(sorted(self.specs))})")
        return key

    @property
    def task_ids(self) -> list[str]:
        """The tasks resets draw from: all, or those of the split's side of the task split."""
        if self.split is None:
            return sorted(self.specs)
        heldout = self.split == HELDOUT_SPLIT
        return sorted(t for t, spec in self.specs.items() if spec.heldout == heldout)

    @property
    def modality(self) -> str:
        """The current task's modality (or the override every task gets)."""
        if self._modality_override is not None:
            return self._modality_override
        return self.task.spec.modality if self.task else "gui"

    def _ensure_provider(self):
        if self.provider is None:
            self.provider = make_provider(self.provider_config, ProviderContext(
                self.adapter, self.width, self.height, self._settle))
        return self.provider

    # -- Gymnasium API -------------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, options: dict[str, Any]) -> tuple[str, int]:
        """The (task id, variant seed) a reset with these options draws from ``rng``."""
        task_id = self._resolve_task_id(options["task"]) if options.get("task") \
            else self._fixed_task
        if task_id is None:
            task_id = self.task_ids[int(rng.integers(len(self.task_ids)))]
        spec = self.specs[task_id]
        if "query" in options:
            return task_id, query_index(task_id, spec.queries, options["query"])
        if "variant" in options:
            variant = int(options["variant"])
            if spec.queries:  # checked before the running episode is given up
                variant = query_index(task_id, spec.queries, variant)
            return task_id, variant
        # a query pool's variants are its query indices; other specs' any seed
        space = len(spec.queries) or 2**31 - 1
        variant = int(rng.integers(space))
        while self.split in SPLITS and variant_split(spec, variant) != self.split:
            variant = int(rng.integers(space))
        return task_id, variant

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode. ``options``: ``task`` (an id; else the env's or a drawn one),
        ``variant`` (a seed for the task's parameters and data; else drawn from the RNG) or,
        for a task with a query pool, ``query`` (a query id). Returns (observation, info);
        info names the task, variant, split and instruction."""
        super().reset(seed=seed)
        options = dict(options or {})
        task_id, variant = self._draw(self.np_random, options)
        why = self._reward.refuses and self._reward.refuses(self.specs[task_id].evaluator)
        if why:
            raise ValueError(f"reward={self.reward_mode!r} cannot score {task_id}: {why}")
        provider = self._ensure_provider()
        if self.task is not None:
            self.task.cleanup()
        self._drop_frozen()
        self._episode_over = True
        task = Task(self.specs[task_id], variant, self.adapter.generators, provider.paths,
                    hints=self.hints)
        self.task = self._soft_reset(provider, task) or provider.reset(self.adapter, task)
        self._frame = provider.screenshot()
        self._terminal = ""
        self._answer = None
        self._steps = 0
        self.final_state = self.evaluation = None
        self.episode_reports: dict[str, Any] = {}
        self._episode_over = False
        self._criteria = self.task.criteria()
        self._progress = self._cheap_score() if self._reward.dense else 0.0
        self._prefetch(seed, options, (task_id, variant))
        # the state readers started ahead of need (evaluation.warm), held back since the
        # last episode's end so as not to slow this reset's program start
        prepare_warm(provider)
        info = {"task_id": task_id, "variant": variant,
                "split": episode_split(self.task.spec, variant),
                "instruction": self.task.instruction,
                "difficulty": self.task.spec.difficulty, "max_steps": self.max_steps,
                "modality": self.modality, "cli_allowed": self.cli_allowed,
                "oracle_steps": self.task.oracle_steps,
                "timings": Timings(provider.last_reset_timings)}
        if self.task.spec.queries:
            info["query"] = self.task.params["query"]
        if self.expose_state:
            self._expose_state(info)
        return self._observation(), info

    def _soft_reset(self, provider, task: Task) -> Task | None:
        """The task restored in the running program, or None: restart it (see soft_reset)."""
        if self._soft_in_a_row >= self.soft_reset:
            self._soft_in_a_row = 0
            return None
        staged = provider.soft_reset(self.adapter, task)
        self._soft_in_a_row = self._soft_in_a_row + 1 if staged is not None else 0
        return staged

    def _expose_state(self, info: dict[str, Any]) -> None:
        try:
            info["state"] = self.adapter.dump_state(self.provider)
        except Exception as exc:  # a busy or crashed program: say so, keep the episode
            info["state_error"] = f"{type(exc).__name__}: {exc}"

    def _prefetch(self, seed: int | None, options: dict[str, Any],
                  this: tuple[str, int]) -> None:
        """Tell the provider which variants the next resets most likely ask for, most likely
        first, as many as the pool holds.

        What :meth:`expect` announced, if this reset was its first entry. Otherwise a guess:
        after an unseeded reset, the next draws of the RNG (loops that seed once); after a
        seeded one, seed + 1 (loops that seed every episode), the RNG's continuation (loops
        that seed only the first reset), the same seed again (replays of one variant), then
        further draws of the RNG.
        """
        expected, self._expected = self._expected, []
        if not self.pool_size:
            return
        if len(expected) > 1 and expected[0] == this:
            self._want(expected[1:])
            return
        ahead = copy.deepcopy(self.np_random)
        wanted = []
        if seed is not None:
            wanted = [self._draw(seeding.np_random(seed + 1)[0], options),
                      self._draw(ahead, options),
                      self._draw(seeding.np_random(seed)[0], options)]
        while len(wanted) < self.pool_size:
            wanted.append(self._draw(ahead, options))
        self._want(wanted)

    def expect(self, episodes: list[tuple[str | None, int | None]]) -> None:
        """Announce the coming resets, in order, as ``(task, seed)`` pairs (what
        ``reset(seed=seed, options={"task": task})`` would get; None for either: the env's
        fixed task or the RNG's continuation), so that the warm pool prepares exactly those
        instead of guessing. For callers that know their schedule, such as the audit (the
        same variant again for several cases, then the next) or an evaluation harness.

        The pool starts on them at once (as many as it holds). When the next reset is the
        first entry, the rest stay wished for, and an announcement of one more episode
        before each reset keeps the pool a step ahead; any other reset, or one that leaves
        nothing announced, goes back to guessing. A no-op without a pool."""
        if not self.pool_size:
            return
        self._ensure_provider()
        ahead = copy.deepcopy(self.np_random)
        self._expected = [self._draw(ahead if seed is None else seeding.np_random(seed)[0],
                                     {"task": task} if task else {})
                          for task, seed in episodes]
        self._want(self._expected)

    def _want(self, wanted: list[tuple[str, int]]) -> None:
        generators, hints = self.adapter.generators, self.hints
        self.provider.prefetch(self.adapter, [
            (f"{task_id}#{variant}",
             lambda paths, spec=self.specs[task_id], variant=variant:
                 Task(spec, variant, generators, paths, hints=hints))
            for task_id, variant in wanted[:self.pool_size]])

    @property
    def max_steps(self) -> int:
        if self._max_steps_override is not None:
            return self._max_steps_override
        return self.task.spec.max_steps if self.task else 50

    @property
    def cli_allowed(self) -> bool:
        if self.task is None or self.modality not in CLI_MODALITIES:
            return False
        return self.provider.cli_isolated or self._allow_unsafe_cli

    def step(self, action):
        if self._episode_over:
            raise ResetNeeded("call reset() before step() (the episode is over or not started)")
        t0 = time.perf_counter()
        info: dict[str, Any] = {}
        try:
            parsed = parse_action(action, (self.width, self.height))
        except A.ActionError as exc:
            parsed = []
            info["action_error"] = str(exc)
        t1 = time.perf_counter()
        self._steps += 1
        status = None
        touched_screen = False
        for act in parsed:
            if isinstance(act, A.Done | A.Fail):
                status = "done" if isinstance(act, A.Done) else "fail"
                break
            try:
                touched_screen |= self._perform(act, info)
            except Exception as exc:  # an X error must not end the env
                info["action_error"] = f"{type(act).__name__} failed: {exc}"
                break
        t2 = time.perf_counter()
        self._frame = self.provider.wait_settled() if touched_screen else \
            self.provider.screenshot()
        t3 = time.perf_counter()
        if touched_screen and self.provider.last_settled is False:
            info["settle_capped"] = True  # still changing at the cap: an animation, a busy app
        truncated = False
        limit = self.provider.limit_exceeded()
        if limit is not None:
            # A zone held more memory than its budget and was stopped under the agent: the
            # episode ends here, even if this step also said DONE (the state is not the one
            # the agent meant, and the reason must not be lost). Comes before the crash
            # check: a stopped program zone is not a crash of the program.
            info["limit"] = limit
            status, truncated = "limit", True
        if status is None and not self.provider.app_running():
            info["app_crashed"] = (f"{self.adapter.info.display_name} exited; output ends with:\n"
                                   f"{self.provider.app_log_tail()[-2000:]}")
            status, truncated = "crashed", True
        if status is None and self._steps >= self.max_steps:
            status, truncated = "truncated", True
        terminated = status in ("done", "fail")
        reward = 0.0
        if terminated or truncated:
            reward = self._finish(status)
            info["evaluation"] = self.evaluation.to_dict()
            info.update(self.episode_reports)
            # "done", "fail", "truncated" (step budget), "crashed" or "limit" (memory)
            info["end"] = status
        elif self._reward.dense:
            progress = self._cheap_score()
            reward, self._progress = progress - self._progress, progress
        grab = self.provider.last_grab_seconds
        info["timings"] = Timings(parse=t1 - t0, execute=t2 - t1,
                                  settle=max(t3 - t2 - grab, 0.0), grab=grab,
                                  total=time.perf_counter() - t0)
        info["steps"] = self._steps
        info["parsed"] = [action_to_dict(a) for a in parsed]
        if self.expose_state and status not in ("crashed", "limit"):
            self._expose_state(info)
        return self._observation(), reward, terminated, truncated, info

    def _perform(self, act: A.Action, info: dict[str, Any]) -> bool:
        """Do one parsed action; True if it touched the screen."""
        if isinstance(act, A.Wait):
            time.sleep(min(max(act.seconds, 0.0), MAX_WAIT))
            return True
        if isinstance(act, A.Answer):
            self._answer = act.text
            self._terminal = f"answer recorded: {act.text}"[-MAX_TERMINAL:]
            return False
        if isinstance(act, A.Run | A.Launch):
            if not self.cli_allowed:
                why = f"the task's modality is {self.modality!r} (no shell)" \
                    if self.modality not in CLI_MODALITIES \
                    else "CLI actions need an isolated sandbox (bubblewrap)"
                verb = "run()" if isinstance(act, A.Run) else "launch()"
                info["action_error"] = f"{verb} refused: {why}"
                return False
        if isinstance(act, A.COMPUTER_ACTIONS):
            try:
                text = computer_api.perform(self.provider, act, f"launch-{self._steps}")
            except A.ActionError as exc:
                info["action_error"] = str(exc)
                return False
            if text is not None:
                self._terminal = text[-MAX_TERMINAL:]
            return isinstance(act, (*A.GUI_ACTIONS, A.Launch))
        if isinstance(act, A.Run):
            timeout = min(act.timeout or self.task.spec.cli_timeout, self.task.spec.cli_timeout)
            result = self.provider.run_command(act.command, timeout=timeout)
            self._terminal = result.terminal_text(act.command)[-MAX_TERMINAL:]
            return True
        self.provider.execute(act)
        return True

    def _finish(self, status: str) -> float:
        self._episode_over = True
        defer_warm(self.provider)  # a reset follows: see prepare_warm in reset
        self.final_state = self.collect_final_state(status)
        self.evaluation = evaluate(self._criteria, self.final_state)
        # every episode report (a ported benchmark's breakdown), whatever the reward
        self.episode_reports = episode_reports(self._criteria, self.final_state)
        gave_up = status == "fail" and not self.task.spec.infeasible
        return self._reward.final(EpisodeEnd(self._criteria, self.final_state, self.evaluation,
                                             gave_up, paid=self._progress))

    def _cheap_score(self) -> float:
        """Progress from the cheap criteria, over the total weight of all criteria."""
        total = sum(c.weight for c in self._criteria)
        cheap = [c for c in self._criteria if is_cheap(c)]
        if not cheap or total <= 0:
            return 0.0
        # A copy, never the live directory (agent processes may still swap links in it);
        # the agent zone keeps running: freeze_copy itself follows no link.
        work = self._new_frozen_dir()
        freeze_copy(self.provider.sync_work_dir(), work)
        state = FinalState(work_dir=work, screenshot=self._frame,
                           terminal=self._terminal, agent_status="running",
                           windows=self._windows(), answer=self._answer)
        try:
            result = evaluate(cheap, state)
        finally:
            shutil.rmtree(work.parent, ignore_errors=True)
            self._frozen.remove(work.parent)
        return sum(c.weight * c.earned for c in result.criteria) / total

    def _new_frozen_dir(self) -> Path:
        """A fresh path for a frozen work directory in a private (0700) host directory."""
        parent = owned_tempdir("final")
        self._frozen.append(parent)
        return parent / "work"

    def _drop_frozen(self) -> None:
        for parent in self._frozen:
            shutil.rmtree(parent, ignore_errors=True)
        self._frozen.clear()

    def _windows(self) -> list[dict] | None:
        try:
            return [w.to_dict() for w in self.provider.windows()]
        except Exception:
            return None

    def checkpoint(self, status: str = "done") -> FinalState:
        """The state an episode ending now with ``status`` would be scored on, collected
        without ending it (a fresh screenshot, as the ending step grabs one). The audit scores
        the no-op and each negative that is a prefix of the oracle this way, on the oracle's
        own program start. The agent zone's processes keep running (the episode goes on: a
        code tool's terminal and servers live there), so only a trusted caller's steps, which
        leave nothing running that writes, make this the state an ending step would see."""
        if self.task is None or self._episode_over:
            raise RuntimeError("checkpoint() needs an episode in progress: call reset() first")
        self._frame = self.provider.screenshot()
        return self.collect_final_state(status, stop_agents=False)

    def collect_final_state(self, status: str, stop_agents: bool = True) -> FinalState:
        """What the evaluator reads: work files, the app's internal state, the screen, the
        window list and the output of commands the criteria ask to run in the sandbox.

        Every agent process is stopped first (not for :meth:`checkpoint`), then the work
        directory is copied into a private host directory (regular files only, size caps, no
        links): the evaluator scores that frozen copy, so one episode always gets one score."""
        work = self._new_frozen_dir()
        freeze = self.provider.freeze_work_dir(work) if stop_agents else \
            freeze_copy(self.provider.sync_work_dir(), work)
        app_state, error = None, None
        if self.provider.app_running():
            try:
                app_state = self.adapter.dump_state(self.provider)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        else:
            error = "the program is not running"
        commands = {}
        for command in commands_needed(self._criteria):
            try:
                result = self.provider.run_command(command, timeout=30.0)
                commands[command] = {"returncode": result.returncode, "output": result.output,
                                     "timed_out": result.timed_out}
            except Exception as exc:
                commands[command] = {"returncode": None, "output": f"not run: {exc}",
                                     "timed_out": False}
        if stop_agents:
            self.provider.stop_agent_processes()  # the commands' own processes
        self.freeze_report = freeze.to_dict()
        return FinalState(work_dir=work, app_state=app_state,
                          app_state_error=error, screenshot=self._frame.copy(),
                          terminal=self._terminal, agent_status=status,
                          windows=self._windows(), commands=commands, answer=self._answer)

    def _observation(self) -> dict[str, Any]:
        instruction = self.task.instruction if self.task else ""
        frame = self._frame.copy() if self.obs_size is None else np.asarray(
            Image.fromarray(self._frame).resize(self.obs_size, Image.BILINEAR))
        return {"screenshot": frame, "instruction": instruction[:MAX_INSTRUCTION],
                "terminal": self._terminal[-MAX_TERMINAL:]}

    def render(self):
        if self.render_mode == "rgb_array":
            return self._frame.copy()
        return None

    def close(self) -> None:
        self._drop_frozen()
        if self.task is not None:
            self.task.cleanup()
        if self.provider is not None:
            close_warm(self.provider)
            self.provider.close()
            self.provider = None
        super().close()
