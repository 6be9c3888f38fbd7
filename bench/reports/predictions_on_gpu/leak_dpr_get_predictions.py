# Source: https://github.com/deepset-ai/haystack/pull/618
# Report: DensePassageRetriever._get_predictions() aggregated every batch's query and passage embeddings as tensors on the GPU until the whole corpus was embedded, a large GPU memory overhead on big document stores; fixed by moving each batch to the CPU straight away
# Shape: retriever method; a dict of per-kind lists bound before the DataLoader loop receives each batch's (no-grad) embedding tensors still on the device, concatenated and moved to the CPU only after the loop
# Expect: TML004 line 43; TML004 line 45
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
                        all_embeddings["query"].append(query_embeddings)  # expect: TML004
                    if passage_embeddings is not None:
                        all_embeddings["passages"].append(passage_embeddings)  # expect: TML004
                progress_bar.update(self.batch_size)

        if all_embeddings["passages"]:
            all_embeddings["passages"] = torch.cat(all_embeddings["passages"]).cpu().numpy()
        if all_embeddings["query"]:
            all_embeddings["query"] = torch.cat(all_embeddings["query"]).cpu().numpy()
        return all_embeddings

    def embed_queries(self, texts: List[str]) -> List[np.ndarray]:
        return self._get_predictions([{"query": q} for q in texts])["query"]

    def embed_passages(self, docs: List[Document]) -> List[np.ndarray]:
        passages = [{"passages": [{"title": d.meta.get("name", ""), "text": d.text,
                                   "label": "positive", "external_id": d.id}]} for d in docs]
        return self._get_predictions(passages)["passages"]
