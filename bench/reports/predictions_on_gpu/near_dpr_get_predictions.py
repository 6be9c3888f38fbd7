# Source: https://github.com/deepset-ai/haystack/pull/618
# Report: DPR._get_predictions() kept every batch's embeddings on the GPU until the corpus was done; the fix moved each batch's query/passage embeddings to the CPU (numpy) as soon as it was computed
# Shape: fixed version: same dict of per-kind lists bound before the loop, but each appended item is already .cpu().numpy(), and the lists are np.concatenate'd after the loop
# Expect: near-miss: must be silent
from typing import List

import numpy as np
import torch
from torch.utils.data import SequentialSampler
from tqdm import tqdm

from farm.data_handler.dataloader import NamedDataLoader
from haystack import Document


class DensePassageRetriever:
    def __init__(self, model, processor, batch_size=16, use_gpu=True, progress_bar=True):
        self.model = model
        self.processor = processor
        self.batch_size = batch_size
        self.progress_bar = progress_bar
        self.device = torch.device("cuda" if use_gpu and torch.cuda.is_available() else "cpu")
        self.model.to(self.device)

    def _get_predictions(self, dicts):
        dataset, tensor_names, _ = self.processor.dataset_from_dicts(
            dicts, indices=list(range(len(dicts)))
        )
        data_loader = NamedDataLoader(
            dataset=dataset, sampler=SequentialSampler(dataset),
            batch_size=self.batch_size, tensor_names=tensor_names,
        )
        all_embeddings = {"query": [], "passages": []}
        self.model.eval()
        disable_tqdm = len(dataset) == 1 or not self.progress_bar
        with tqdm(total=len(data_loader) * self.batch_size, unit=" Docs",
                  desc="Create embeddings", disable=disable_tqdm) as progress_bar:
            for batch in data_loader:
                batch = {key: batch[key].to(self.device) for key in batch}
                with torch.no_grad():
                    query_embeddings, passage_embeddings = self.model.forward(**batch)[0]
                    if query_embeddings is not None:
                        all_embeddings["query"].append(query_embeddings.cpu().numpy())
                    if passage_embeddings is not None:
                        all_embeddings["passages"].append(passage_embeddings.cpu().numpy())
                progress_bar.update(self.batch_size)

        if all_embeddings["passages"]:
            all_embeddings["passages"] = np.concatenate(all_embeddings["passages"])
        if all_embeddings["query"]:
            all_embeddings["query"] = np.concatenate(all_embeddings["query"])
        return all_embeddings

    def embed_queries(self, texts: List[str]) -> List[np.ndarray]:
        return self._get_predictions([{"query": q} for q in texts])["query"]

    def embed_passages(self, docs: List[Document]) -> List[np.ndarray]:
        passages = [{"passages": [{"title": d.meta.get("name", ""), "text": d.text,
                                   "label": "positive", "external_id": d.id}]} for d in docs]
        return self._get_predictions(passages)["passages"]
