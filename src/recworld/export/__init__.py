"""Export a suite to the harnesses researchers already run: lm-eval, inspect_ai, Hugging Face datasets.

Export sits above :mod:`recworld.lrworld` and :mod:`recworld.scoring` and below
nothing: it writes files that name lm-eval, inspect_ai and ``datasets`` but
never imports them (nor the model backends or the runner). The entry point is
:func:`recworld.export.run.export_suite`; this package imports nothing itself
so ``recworld --help`` stays fast.
"""
