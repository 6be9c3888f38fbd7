# Source: https://github.com/huggingface/transformers/pull/35440
# Report: PR that releases GPU memory after each Optuna trial in Trainer.hyperparameter_search (fixing OOM when large models are re-created trial after trial).
# Shape: fixed variant: one long-lived trainer is reused across trials, but before each trial its previous model/optimizer are deleted (plus gc + empty_cache), the new model replaces them, and the objective returns a plain float, so at most one trial's model is alive.
# Expect: near-miss: must be silent
import gc

import optuna
import torch


class SimpleTrainer:
    def __init__(self, model_init, train_loader, eval_loader, device="cuda"):
        self.model_init = model_init
        self.train_loader, self.eval_loader = train_loader, eval_loader
        self.device = device
        self.model = None
        self.optimizer = None

    def train(self, trial):
        lr = trial.suggest_float("learning_rate", 1e-5, 1e-3, log=True)
        self.model = self.model_init(trial).to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.model.train()
        for batch in self.train_loader:
            batch = {k: v.to(self.device) for k, v in batch.items()}
            out = self.model(**batch)
            self.optimizer.zero_grad()
            out.loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        total = 0.0
        for batch in self.eval_loader:
            batch = {k: v.to(self.device) for k, v in batch.items()}
            total += self.model(**batch).loss.item()
        return total / len(self.eval_loader)


def run_hp_search_optuna(trainer, n_trials):
    def _objective(trial):
        # free the previous trial's weights before building the next model
        del trainer.model, trainer.optimizer
        trainer.model, trainer.optimizer = None, None
        gc.collect()
        torch.cuda.empty_cache()
        trainer.train(trial)
        return trainer.evaluate()

    study = optuna.create_study(direction="minimize")
    study.optimize(_objective, n_trials=n_trials, gc_after_trial=True)
    return study.best_trial.params
