# Source: https://github.com/MIC-DKFZ/nnUNet/issues/34
# Report: for cross-validation ensembling at inference, the checkpoints of all folds (weights + optimizer state) were loaded straight onto the GPU and kept there for the whole run; fixed by loading them with map_location cpu
# Shape: fixed version (the upstream fix): the per-fold checkpoint dicts are loaded with map_location cpu, so only the trainer network that load_checkpoint_ram fills lives on the GPU
# Expect: near-miss: must be silent
import os
from os.path import isdir, join

import numpy as np
import torch


def _fold_dirs(folder, folds):
    if folds is None:
        return sorted(join(folder, d) for d in os.listdir(folder) if d.startswith("fold"))
    if isinstance(folds, int):
        folds = [folds]
    dirs = [join(folder, "fold_%d" % f) for f in folds]
    assert all(isdir(d) for d in dirs), "list of folds specified but not all output folders are present"
    return dirs


def load_model_and_checkpoint_files(folder, restore_model, folds=None, fp16=None):
    fold_dirs = _fold_dirs(folder, folds)
    trainer = restore_model(join(fold_dirs[0], "model_best.model.pkl"), fp16=fp16)
    trainer.output_folder = folder
    trainer.initialize(training=False)
    all_best_model_files = [join(d, "model_best.model") for d in fold_dirs]
    print("using the following model files: ", all_best_model_files)
    all_params = [torch.load(f, map_location=torch.device("cpu")) for f in all_best_model_files]
    return trainer, all_params


def predict_cases(model_folder, restore_model, cases, folds, do_tta=True, fp16=None):
    print("loading parameters for folds,", folds)
    trainer, params = load_model_and_checkpoint_files(model_folder, restore_model, folds, fp16=fp16)
    predictions = {}
    for case_id, data in cases:
        print("predicting", case_id)
        softmax = []
        for p in params:
            trainer.load_checkpoint_ram(p, train=False)
            probs = trainer.predict_preprocessed_data_return_softmax(
                data, do_mirroring=do_tta, mirror_axes=trainer.data_aug_params["mirror_axes"],
                use_gaussian=True, patch_size=trainer.patch_size)
            softmax.append(probs[None])
        softmax_mean = np.mean(np.vstack(softmax), 0)
        predictions[case_id] = softmax_mean.argmax(0)
    return predictions
