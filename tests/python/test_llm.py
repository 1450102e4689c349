"""The LLM extension from Python: greedy text equal to `switchyard llm`'s on
the real stories260K model, the token iterator equal to the one-shot call,
seeded sampling equal to the CLI's, tokenizer round trip, early stop."""
import os
import shutil
import subprocess

import sytest
import switchyard as sy

MODEL = sytest.need_shared("models/llm/stories260K.bin")
TOK = sytest.need_shared("models/llm/tok512.bin")
PROMPT = "Once upon a time"


def cli_text(bundle, *args):
    r = sytest.run_c([sytest.CLI, "llm", "--bundle", bundle, "--quiet"] + list(args),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("\n"), repr(r.stdout)
    return r.stdout[:-1]  # the CLI ends the streamed text with a newline


class Llm(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bundle = os.path.join(sytest.workdir("llm"), "stories260K")
        shutil.rmtree(cls.bundle, ignore_errors=True)
        r = sytest.run_c([sytest.CLI, "llm-export", MODEL, TOK, "-o", cls.bundle, "--quiet"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        cls.llm = sy.Llm(cls.bundle)

    def setUp(self):
        self.llm.reset()

    def test_greedy_equals_cli(self):
        want = cli_text(self.bundle, "--prompt", PROMPT, "--max-tokens", "60")
        self.assertGreater(len(want), 40)
        r = self.llm.complete(PROMPT, max_tokens=60)
        self.assertEqual(r.text, want)
        self.assertEqual(len(r.ids), 60)
        self.assertEqual(r.stop_reason, "length")
        self.assertEqual(r.n_prompt, len(self.llm.encode(PROMPT, add_bos=True)))

    def test_iterator_equals_one_shot(self):
        want = self.llm.complete(PROMPT, max_tokens=50)
        self.llm.reset()
        gen = self.llm.generate(PROMPT, max_tokens=50)
        pieces = list(gen)
        self.assertEqual("".join(pieces), want.text)
        self.assertEqual(tuple(p.id for p in pieces), want.ids)  # every token is one complete piece here
        self.assertEqual(gen.result, want)

    def test_sampling_equals_cli(self):
        want = cli_text(self.bundle, "--prompt", PROMPT, "--max-tokens", "40", "--temperature", "0.8",
                        "--seed", "7", "--top-k", "40")
        r = self.llm.complete(PROMPT, max_tokens=40, temperature=0.8, seed=7, top_k=40)
        self.assertEqual(r.text, want)

    def test_stop_string_and_early_close(self):
        want = cli_text(self.bundle, "--prompt", PROMPT, "--max-tokens", "60", "--stop", "park")
        r = self.llm.complete(PROMPT, max_tokens=60, stop=["park"])
        self.assertEqual(r.stop_reason, "stop string")
        self.assertNotIn("park", r.text)
        self.assertTrue(want.startswith(r.text))  # the CLI streamed what came before the stop string
        self.llm.reset()
        gen = self.llm.generate(PROMPT, max_tokens=60)
        first = [next(gen) for _ in range(3)]
        gen.close()
        self.assertEqual(gen.result.stop_reason, "user")
        self.assertEqual(gen.result.ids[:3], tuple(t.id for t in first))
        self.assertLess(len(gen.result.ids), 60)
        self.assertLessEqual(len(gen.result.ids), 4)  # the worker runs at most one piece ahead of the reader

    def test_abandoned_iterator_does_not_hold_the_runner(self):
        want = self.llm.complete(PROMPT, max_tokens=10)
        self.llm.reset()
        gen = self.llm.generate(PROMPT, max_tokens=60)
        next(gen)
        self.llm.reset()  # the same thread calls again while gen is open: gen is closed, not waited for
        self.assertEqual(gen.result.stop_reason, "user")
        self.assertEqual(self.llm.complete(PROMPT, max_tokens=10), want)
        self.llm.reset()
        for _ in self.llm.generate(PROMPT, max_tokens=60):
            break  # a for loop left early, its iterator still referenced by nothing
        self.llm.reset()
        self.assertEqual(self.llm.complete(PROMPT, max_tokens=10), want)

    def test_tokenizer(self):
        ids = self.llm.encode(PROMPT)
        self.assertEqual(self.llm.decode(ids).strip(), PROMPT)
        self.assertEqual(self.llm.encode(PROMPT, add_bos=True), [self.llm.info()["bos"]] + ids)
        # ids as the prompt (nothing prepended) continue like the text prompt
        want = self.llm.complete(PROMPT, max_tokens=20)
        self.llm.reset()
        self.assertEqual(self.llm.complete([self.llm.info()["bos"]] + ids, max_tokens=20).ids, want.ids)
        info = self.llm.info()
        self.assertEqual((info["vocab"], info["n_layers"]), (512, 5))  # stories260K: 5 layers, 512 tokens

    def test_errors(self):
        with self.assertRaises(sy.Error) as c:
            sy.Llm(self.bundle, options="threadz=2")
        self.assertIn("threadz", c.exception.message)
        self.assertEqual(c.exception.code, sy.StatusCode.INVALID_CONFIG)
        with self.assertRaises(sy.Error) as c:
            self.llm.complete(PROMPT, seed=-1)
        self.assertEqual(c.exception.code, sy.StatusCode.INVALID_ARGUMENT)


if __name__ == "__main__":
    sytest.main()
