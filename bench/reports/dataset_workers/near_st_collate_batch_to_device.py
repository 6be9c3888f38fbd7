# Source: https://github.com/huggingface/sentence-transformers/pull/1551
# Report: SentenceTransformer.fit installed smart_batching_collate as the DataLoader's collate_fn, and that collate moved labels and tokenized features to the target (CUDA) device, so fit() could not be used with num_workers > 0; the PR moves the device transfer out of the collate function.
# Shape: after the PR: smart_batching_collate (still installed as collate_fn) returns CPU tensors only; fit() applies the same batch_to_device helper to labels and features in the main process, inside the training loop.
# Expect: near-miss: must be silent
import torch
from torch import Tensor, nn


def batch_to_device(batch, target_device):
    for key in batch:
        if isinstance(batch[key], Tensor):
            batch[key] = batch[key].to(target_device)
    return batch


class SentenceEncoder(nn.Sequential):
    def __init__(self, modules, device=None):
        super().__init__(*modules)
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self._target_device = torch.device(device)

    def tokenize(self, texts):
        return self[0].tokenize(texts)

    def smart_batching_collate(self, batch):
        num_texts = len(batch[0].texts)
        texts = [[] for _ in range(num_texts)]
        labels = []
        for example in batch:
            for idx, text in enumerate(example.texts):
                texts[idx].append(text)
            labels.append(example.label)
        labels = torch.tensor(labels)
        sentence_features = []
        for idx in range(num_texts):
            tokenized = self.tokenize(texts[idx])
            sentence_features.append(tokenized)
        return sentence_features, labels

    def fit(self, train_objectives, epochs=1, optimizer_class=torch.optim.AdamW, lr=2e-5):
        self.to(self._target_device)
        dataloaders = [dataloader for dataloader, _ in train_objectives]
        for dataloader in dataloaders:
            dataloader.collate_fn = self.smart_batching_collate
        loss_models = [loss for _, loss in train_objectives]
        optimizers = [optimizer_class(loss.parameters(), lr=lr) for loss in loss_models]
        for epoch in range(epochs):
            for loss_model in loss_models:
                loss_model.zero_grad()
                loss_model.train()
            for dataloader, loss_model, optimizer in zip(dataloaders, loss_models, optimizers):
                for features, labels in dataloader:
                    labels = labels.to(self._target_device)
                    features = [batch_to_device(f, self._target_device) for f in features]
                    loss_value = loss_model(features, labels)
                    loss_value.backward()
                    torch.nn.utils.clip_grad_norm_(loss_model.parameters(), 1.0)
                    optimizer.step()
                    optimizer.zero_grad()
