# Source: https://github.com/princeton-nlp/SimCSE/blob/main/simcse/trainers.py
# Report: SimCSE's CLTrainer (HF Trainer subclass); one-edit mistake (the old HF Trainer tr_loss bug): training_step returns the loss without .detach()
# Shape: the graph-attached loss travels through the return of training_step into tr_loss +=, a device tensor that lives across steps (reset in place only at logging), so every step's autograd nodes chain up
# Expect: TML001 line 62
import numpy as np
import torch
from transformers import Trainer


class MiniSentEval:
    """Stand-in for senteval.engine.SE: calls the batcher on every chunk of sentences."""

    def __init__(self, params, batcher, prepare):
        self.params, self.batcher, self.prepare = params, batcher, prepare

    def eval(self, sentences, bsize=64):
        embeddings = []
        for i in range(0, len(sentences), bsize):
            embeddings.append(self.batcher(self.params, sentences[i:i + bsize]).numpy())
        return np.vstack(embeddings)


class CLTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", eval_senteval_transfer=False):
        def prepare(params, samples):
            return

        def batcher(params, batch):
            sentences = [" ".join(s) for s in batch]
            enc = self.tokenizer.batch_encode_plus(sentences, return_tensors="pt", padding=True)
            for k in enc:
                enc[k] = enc[k].to(self.args.device)
            with torch.no_grad():
                outputs = self.model(**enc, output_hidden_states=True, return_dict=True, sent_emb=True)
                pooler_output = outputs.pooler_output
            return pooler_output.cpu()

        se = MiniSentEval({"kfold": 5}, batcher, prepare)
        self.model.eval()
        embs = se.eval(self.sts_dev_sentences)
        metrics = {"eval_stsb_spearman": self.sts_scorer(embs)}
        self.log(metrics)
        return metrics

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = self.compute_loss(model, inputs)
        if self.args.n_gpu > 1:
            loss = loss.mean()
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss

    def train_loop(self, model, train_dataloader, num_train_epochs):
        # tr_loss is a tensor to avoid a host sync through .item() every step
        tr_loss = torch.tensor(0.0).to(self.args.device)
        model.zero_grad()
        for epoch in range(num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                tr_loss += self.training_step(model, inputs)  # expect: TML001
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    self.state.global_step += 1
                    if self.state.global_step % self.args.logging_steps == 0:
                        self.log({"loss": tr_loss.item() / self.args.logging_steps})
                        tr_loss -= tr_loss
        return tr_loss.item()
