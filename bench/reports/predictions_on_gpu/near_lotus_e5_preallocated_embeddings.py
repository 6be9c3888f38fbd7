# Source: https://github.com/lotus-data/lotus/pull/16
# Report: "Optimize speed and gpu usage for embed": E5Model.embed collected every batch's embeddings in a list on the GPU and concatenated them at the end, and torch.cat needs double the memory since it keeps the originals as well as the new concatenated tensor; the fix pre-allocates the output.
# Shape: the output tensor is allocated once with the final size and each batch is written into its slice under torch.inference_mode(), so the loop never grows a container or a graph.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer


class E5Model:
    def __init__(self, model="intfloat/e5-base-v2", device=None, batch_size=64, **kwargs):
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModel.from_pretrained(model).to(self.device)
        self.batch_size = batch_size
        self.kwargs = {"normalize": True, **kwargs}

    @staticmethod
    def average_pool(last_hidden_states, attention_mask):
        last_hidden = last_hidden_states.masked_fill(~attention_mask[..., None].bool(), 0.0)
        return last_hidden.sum(dim=1) / attention_mask.sum(dim=1)[..., None]

    def embed(self, docs, **kwargs):
        kwargs = {**self.kwargs, **kwargs}
        batch_size = kwargs.get("batch_size", self.batch_size)
        total_docs = len(docs)
        embed_dim = self.model.config.hidden_size
        embeddings = torch.empty((total_docs, embed_dim), device=self.device)
        with torch.inference_mode():
            for batch_start in tqdm(range(0, total_docs, batch_size)):
                batch = docs[batch_start : batch_start + batch_size]
                batch_dict = self.tokenizer(batch, padding=True, truncation=True,
                                            return_tensors="pt").to(self.device)
                outputs = self.model(**batch_dict)
                batch_embeddings = self.average_pool(outputs.last_hidden_state,
                                                     batch_dict["attention_mask"])
                embeddings[batch_start : batch_start + batch_size] = batch_embeddings
        if kwargs["normalize"]:
            embeddings = F.normalize(embeddings, p=2, dim=1)
        return embeddings.cpu().numpy()

    def __call__(self, docs, **kwargs):
        return self.embed(docs, **kwargs)
